// Wrapper module for the test etcd. build.py copies it into the cache and adds the
// `require go.etcd.io/etcd/server/v3` line at the pinned version.
module cilium-ipam.local/toolchain/etcd

go 1.26
