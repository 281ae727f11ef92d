// Wrapper module for the pulumi CLI. build.py copies it into the cache, requires pkg/v3 and sdk/v3
// at the pinned version and copies pkg's non-local replace lines, then builds pkg/v3/cmd/pulumi.
module cilium-ipam.local/toolchain/pulumi

go 1.26
