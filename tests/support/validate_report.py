#!/usr/bin/env python3
"""validate_report.py - checks `prof analyze --format json` output against
formats/report.schema.json (JSON Schema draft 2020-12) with the jsonschema
package (Debian python3-jsonschema, installed by `make deps`).

usage: validate_report.py SCHEMA REPORT
Prints nothing and exits 0 when REPORT is valid; else prints every
violation with its JSON path and exits 1."""
import json
import sys

import jsonschema


def main():
    if len(sys.argv) != 3:
        print("usage: validate_report.py SCHEMA REPORT", file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    with open(sys.argv[2], encoding="utf-8") as f:
        report = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    errors = sorted(cls(schema).iter_errors(report), key=lambda e: list(e.absolute_path))
    for e in errors[:20]:
        path = "/".join(str(p) for p in e.absolute_path)
        print(f"{sys.argv[2]}: /{path}: {e.message}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
