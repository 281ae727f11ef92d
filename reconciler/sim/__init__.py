"""Discrete-event simulation of a whole cluster on a simulated clock (issue 7).

    loop.py          heap of timed callbacks on SimClock, deterministic for a seed
    scenario.py      demo, S1-S5, chaos as data (nodes, pods, churn, faults, targets)
    workload.py      node joins / pod adds / pod deletes, identical for every policy of a run
    world.py         VPC, subnets, instances on SimulatedEc2
    engine_policy.py the real EniOperator + reconciler.agent agents + MemoryStore ("ours", "cilium-defaults")
    agent_sim.py     reconciler.agent.Agent on the event loop
    parallel.py      --parallel-alloc-workers in simulated time (lock-step threads)
    limiters.py      client-side EC2 limiters (Cilium qps/burst; per-action AWS-sized buckets)
    vpc_cni.py       baseline: per-node VPC-CNI ipamd model
    lower_bound.py   the yardstick: minimum mutating calls and time under AWS's buckets
    metrics.py       pods with IP over time, waits, calls, throttles, flapping
    report.py        figures next to targets, baselines and the bound
    chaos.py         faults + invariants after every step
    view.py / plot.py / cli.py   rich live view, PNG, `cilium-ipam simulate`
"""
