#!/usr/bin/env python3
"""pandas_aggregate.py - the baseline of the reading benchmark: a Chrome
trace loaded with json and aggregated per operation with pandas, the way
trace-analysis scripts do it (calls, total, mean, std, min, max, p50, p95
of the complete "X" events per name, sorted by total time).

usage: pandas_aggregate.py TRACE.json"""
import json
import sys

import pandas as pd


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        trace = json.load(f)
    df = pd.DataFrame(trace["traceEvents"])
    df = df[df["ph"] == "X"]
    by_name = df.groupby("name")["dur"]
    agg = by_name.agg(["count", "sum", "mean", "std", "min", "max"])
    agg["p50"] = by_name.quantile(0.5)
    agg["p95"] = by_name.quantile(0.95)
    print(agg.sort_values("sum", ascending=False).to_string())


if __name__ == "__main__":
    main()
