// Command pulumi-language-python is a minimal Pulumi language host for Python programs and Python
// policy packs. The engine starts it with the engine address as the last argument; it serves the
// LanguageRuntime gRPC service on 127.0.0.1 and prints the chosen port on stdout.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
)

func main() {
	engineAddress := ""
	for _, arg := range os.Args[1:] {
		if !strings.HasPrefix(arg, "-") {
			engineAddress = arg
		}
	}
	execScript, err := findExecScript()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	host := newPythonHost(engineAddress, execScript)
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, host)
			return nil
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "could not start the language host gRPC server: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		fmt.Fprintf(os.Stderr, "language host stopped serving: %v\n", err)
		os.Exit(1)
	}
}

// findExecScript locates pulumi-language-python-exec beside this binary, where build.py puts it.
func findExecScript() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot locate the language host binary: %w", err)
	}
	if resolved, rerr := filepath.EvalSymlinks(self); rerr == nil {
		self = resolved
	}
	script := self + "-exec"
	if _, err := os.Stat(script); err != nil {
		return "", fmt.Errorf("%s is missing beside the language host: re-run tests/toolchain/build.py", script)
	}
	return script, nil
}
