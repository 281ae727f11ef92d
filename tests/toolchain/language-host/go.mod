// Our own small Pulumi Python language host (the upstream pulumi-language-python module is not
// served by the Go proxy here). build.py copies it into the cache and adds the sdk/v3 requirement.
module cilium-ipam.local/toolchain/language-host

go 1.26
