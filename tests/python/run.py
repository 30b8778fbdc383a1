"""run.py - runs the Python binding's tests (tests/python/test_*.py) and
prints one "ok NAME" or "not ok NAME - why" line per test, as the command-line
suites of tests/suite.sh do. Exits 1 when a test failed.
Usage: python3 tests/python/run.py [PATTERN]"""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


class LineResult(unittest.TestResult):
    def _name(self, test):
        return "python/%s.%s" % (test.__class__.__module__, test._testMethodName)

    def addSuccess(self, test):
        super().addSuccess(test)
        print("ok", self._name(test), flush=True)

    def _bad(self, test, err):
        text = self._exc_info_to_string(err, test).strip().splitlines()
        print("not ok %s - %s" % (self._name(test), text[-1] if text else "?"), flush=True)
        print("# " + "\n# ".join(text[-25:]), flush=True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._bad(test, err)

    def addError(self, test, err):
        super().addError(test, err)
        self._bad(test, err)

    def addSubTest(self, test, subtest, err):
        # a failed subtest fails its test, which then gets no addSuccess:
        # its "not ok" line is this one
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._bad(test, err)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        print("ok %s # skip %s" % (self._name(test), reason), flush=True)


def main():
    pattern = sys.argv[1] if len(sys.argv) > 1 else "test_*.py"
    suite = unittest.defaultTestLoader.discover(HERE, pattern=pattern, top_level_dir=HERE)
    result = LineResult()
    suite.run(result)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
