// Wrapper module for the test kube-apiserver. build.py copies it into the cache and adds the
// `require k8s.io/kubernetes` line plus one replace per staging module (from kubernetes' go.mod).
module cilium-ipam.local/toolchain/kube-apiserver

go 1.26
