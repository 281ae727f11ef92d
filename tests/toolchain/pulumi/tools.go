//go:build tools

// Package tools pins the pulumi CLI package as a dependency of this wrapper module.
package tools

import (
	_ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
)
