package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/protobuf/types/known/emptypb"
)

// hostVersion is stamped by build.py with the pinned Pulumi version.
var hostVersion = "0.0.0"

// userActionableExitCode is what pulumi-language-python-exec exits with after it already showed the
// user an error: the engine should then bail without printing another one.
const userActionableExitCode = 32

// pythonHost implements the parts of LanguageRuntime that `pulumi up/preview/destroy` and
// `--policy-pack` need for Python: run a program through the exec script, run a policy pack.
type pythonHost struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	engineAddress string
	execScript    string
}

func newPythonHost(engineAddress, execScript string) *pythonHost {
	return &pythonHost{engineAddress: engineAddress, execScript: execScript}
}

func (h *pythonHost) Handshake(
	context.Context, *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *pythonHost) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: hostVersion}, nil
}

// GetRequiredPlugins reports none: our programs use dynamic providers only, and plugins cannot be
// downloaded here anyway.
func (h *pythonHost) GetRequiredPlugins(
	context.Context, *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

func (h *pythonHost) GetRequiredPackages(
	context.Context, *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

// InstallDependencies is a no-op: the project venv is installed by `make venv`.
func (h *pythonHost) InstallDependencies(
	*pulumirpc.InstallDependenciesRequest, pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	return nil
}

func (h *pythonHost) RuntimeOptionsPrompts(
	context.Context, *pulumirpc.RuntimeOptionsRequest,
) (*pulumirpc.RuntimeOptionsResponse, error) {
	return &pulumirpc.RuntimeOptionsResponse{}, nil
}

func (h *pythonHost) About(_ context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	interp := chooseInterpreter(req.GetInfo(), os.Environ())
	return &pulumirpc.AboutResponse{Executable: interp.python}, nil
}

func (h *pythonHost) GetProgramDependencies(
	context.Context, *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	return &pulumirpc.GetProgramDependenciesResponse{}, nil
}

func (h *pythonHost) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	return &emptypb.Empty{}, nil
}

// Run executes a Pulumi program through pulumi-language-python-exec with the chosen interpreter.
func (h *pythonHost) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	interp := chooseInterpreter(req.GetInfo(), os.Environ())
	config, err := json.Marshal(nonNilMap(req.GetConfig()))
	if err != nil {
		return nil, fmt.Errorf("serializing the stack configuration: %w", err)
	}
	secretKeys, err := json.Marshal(nonNilSlice(req.GetConfigSecretKeys()))
	if err != nil {
		return nil, fmt.Errorf("serializing the secret configuration keys: %w", err)
	}
	cmd := exec.CommandContext(ctx, interp.python, h.execArgs(req)...)
	cmd.Dir = req.GetPwd()
	cmd.Env = interp.environ(os.Environ(),
		"PULUMI_CONFIG="+string(config), "PULUMI_CONFIG_SECRET_KEYS="+string(secretKeys))
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	err = cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return &pulumirpc.RunResponse{}, nil
	case errors.As(err, &exitErr) && exitErr.ExitCode() == userActionableExitCode:
		return &pulumirpc.RunResponse{Bail: true}, nil
	case errors.As(err, &exitErr):
		return &pulumirpc.RunResponse{
			Error: fmt.Sprintf("Program exited with non-zero exit code: %d", exitErr.ExitCode()),
		}, nil
	default:
		return &pulumirpc.RunResponse{
			Error: fmt.Sprintf("could not run %s (set the project's virtualenv option or CILIUM_IPAM_PYTHON): %v",
				interp.python, err),
		}, nil
	}
}

// execArgs is the command line pulumi-language-python-exec parses (see its argparse setup).
func (h *pythonHost) execArgs(req *pulumirpc.RunRequest) []string {
	args := []string{"-u", h.execScript}
	flag := func(name, value string) {
		if value != "" {
			args = append(args, "--"+name, value)
		}
	}
	flag("monitor", req.GetMonitorAddress())
	flag("engine", h.engineAddress)
	flag("project", req.GetProject())
	flag("root_directory", req.GetInfo().GetRootDirectory())
	flag("stack", req.GetStack())
	flag("pwd", req.GetPwd())
	flag("dry_run", fmt.Sprintf("%v", req.GetDryRun()))
	flag("parallel", fmt.Sprint(req.GetParallel()))
	flag("organization", req.GetOrganization())
	args = append(args, programPath(req.GetInfo(), req.GetProgram()))
	return append(args, req.GetArgs()...)
}

// programPath is the entry point (a file or a directory with __main__.py) as an absolute path.
func programPath(info *pulumirpc.ProgramInfo, program string) string {
	if info != nil && info.GetProgramDirectory() != "" {
		entry := info.GetEntryPoint()
		if entry == "" {
			entry = "."
		}
		return filepath.Join(info.GetProgramDirectory(), entry)
	}
	if program == "" {
		return "."
	}
	return program
}

// RunPlugin runs a Python plugin, such as a policy pack, streaming its output and exit code back.
// The pack prints its gRPC port on stdout, which the engine reads from this stream.
func (h *pythonHost) RunPlugin(
	req *pulumirpc.RunPluginRequest, server pulumirpc.LanguageRuntime_RunPluginServer,
) error {
	base := req.GetEnv()
	if len(base) == 0 {
		base = os.Environ()
	}
	interp := chooseInterpreter(req.GetInfo(), base)
	program := programPath(req.GetInfo(), req.GetProgram())
	cmd := exec.CommandContext(server.Context(), interp.python, append([]string{"-u", program}, req.GetArgs()...)...)
	cmd.Dir = req.GetPwd()
	cmd.Env = interp.environ(base)
	cmd.WaitDelay = 5 * time.Second
	stream := &streamWriter{server: server}
	cmd.Stdout = stream.stdout()
	cmd.Stderr = stream.stderr()
	err := cmd.Run()
	var exitErr *exec.ExitError
	code := 0
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	default:
		return fmt.Errorf("could not run plugin %s with %s: %w", program, interp.python, err)
	}
	return stream.send(&pulumirpc.RunPluginResponse{
		Output: &pulumirpc.RunPluginResponse_Exitcode{Exitcode: int32(code)},
	})
}

// streamWriter serialises stdout and stderr chunks onto one gRPC stream (Send is not concurrent-safe).
type streamWriter struct {
	mu     sync.Mutex
	server pulumirpc.LanguageRuntime_RunPluginServer
}

func (s *streamWriter) send(msg *pulumirpc.RunPluginResponse) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.server.Send(msg)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func (s *streamWriter) stdout() writerFunc {
	return func(p []byte) (int, error) {
		chunk := append([]byte{}, p...)
		return len(p), s.send(&pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Stdout{Stdout: chunk}})
	}
}

func (s *streamWriter) stderr() writerFunc {
	return func(p []byte) (int, error) {
		chunk := append([]byte{}, p...)
		return len(p), s.send(&pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Stderr{Stderr: chunk}})
	}
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func nonNilSlice(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
