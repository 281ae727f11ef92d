"""`make bench`: issue 7's scenarios S1-S5 and the large chaos run (run `python -m bench --help`)."""
