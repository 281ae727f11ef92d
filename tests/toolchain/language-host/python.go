package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// interpreter is the Python a program or policy pack runs with, and the env that goes with it.
type interpreter struct {
	python     string
	virtualenv string // empty unless the project named one
}

// chooseInterpreter picks, in order: the project's `virtualenv` runtime option (relative to its
// root directory), the CILIUM_IPAM_PYTHON env var, then python3 on PATH.
func chooseInterpreter(info *pulumirpc.ProgramInfo, env []string) interpreter {
	if venv := virtualenvOption(info); venv != "" {
		return interpreter{python: filepath.Join(venv, "bin", "python"), virtualenv: venv}
	}
	if configured := lookupEnv(env, "CILIUM_IPAM_PYTHON"); configured != "" {
		return interpreter{python: configured}
	}
	if found, err := exec.LookPath("python3"); err == nil {
		return interpreter{python: found}
	}
	return interpreter{python: "python3"}
}

func virtualenvOption(info *pulumirpc.ProgramInfo) string {
	if info == nil || info.GetOptions() == nil {
		return ""
	}
	value, ok := info.GetOptions().GetFields()["virtualenv"]
	if !ok || value.GetStringValue() == "" {
		return ""
	}
	venv := value.GetStringValue()
	if !filepath.IsAbs(venv) {
		venv = filepath.Join(info.GetRootDirectory(), venv)
	}
	return filepath.Clean(venv)
}

// environ is `base` with the interpreter's virtualenv activated and `extra` appended.
func (i interpreter) environ(base []string, extra ...string) []string {
	env := append([]string{}, base...)
	if i.virtualenv != "" {
		bin := filepath.Join(i.virtualenv, "bin")
		env = setEnv(env, "VIRTUAL_ENV", i.virtualenv)
		env = setEnv(env, "PULUMI_RUNTIME_VIRTUALENV", i.virtualenv)
		env = setEnv(env, "PATH", bin+string(os.PathListSeparator)+lookupEnv(env, "PATH"))
	}
	for _, kv := range extra {
		key, value, _ := strings.Cut(kv, "=")
		env = setEnv(env, key, value)
	}
	return env
}

func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

func setEnv(env []string, key, value string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}
