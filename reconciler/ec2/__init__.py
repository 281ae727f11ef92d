"""The EC2 layer: the `Ec2Api` port (api.py) and its two adapters, `Boto3Ec2` (boto3_adapter.py)
and `SimulatedEc2` (sim/); instance-type limits in limits.py. SIMULATOR.md maps every simulated EC2
behaviour to the test that proves it and lists where moto differs."""
