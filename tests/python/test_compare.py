"""test_compare.py - `prof compare` on real PyTorch runs: repeated runs of a
small CNN (tests/python/cnn.py: DataLoader, Adam, .item() every step), five a
side for the two sides of the same loop and three for the slow side, in
directories. The same loop against itself is quiet and passes
--fail-on-regression 10; a forward pass that takes about five times as
long (25 ms more on any machine) is flagged and fails it; one run a
side says that run-to-run variation is unknown.

Why five runs of the same loop: on these shared machines a whole process runs
at one of two speeds (in 31 runs of this loop, about a third took 1.5 times as
long, user CPU time alike, so not waiting for a core), and with three runs a
side both speeds sometimes fall each on one side. Splitting those 31 runs into
random sides of three, 1.9% of 1000 comparisons flagged some operation of
identical runs; of five, 0.3% (formats/rules.md, section 6.3;
tests/bench/compare_splits.py). Some operations also draw their own speed
per process: the first ReLU (features.1.forward) takes 65 or 123 us a call,
a coin toss, so five runs a side can fall mostly one way, and held to
p < 0.01 alone it was once flagged between the two same sides here. With
the operations held together to a false discovery rate, 61 other runs
split into sides of five flagged some operation in 0.2% of 1000
comparisons, against 1.8% held alone.

The runs of the sides are interleaved (A, A', then A', A, then A, A', B, and
so on), so that a change in the machine's load over the test reaches every
side alike, and A and A' each follow the slow side B in every other round: an
effect of the run before (the heavier slow side's, say) would otherwise fall
on one side more. (With A always right after the slow side, A and A' were
once told apart at p < 0.01, five operations; with A after it in two rounds
of three, once, two operations. These orders are taken out. So is a cold
first run, which always fell on A: one run of the loop, kept by no side,
comes first.) When
load from elsewhere swamps three runs and the slowdown is not shown, more
rounds are recorded, up to MORE_ROUNDS: more data for a real change, as a
benchmark would measure again (some shared machines run the same loop at
anywhere from 1x to 2.5x its best speed from one process to the next); the
quiet comparison is never given a second try.
"""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from support import HERE, PROF, analyze_available, run_python

SAME_RUNS = 5
SLOW_RUNS = 3
MORE_ROUNDS = 5
STEPS = 200


def compare(*args):
    return subprocess.run([PROF, "compare"] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)


def forward_of(cmp):
    return next(op for op in cmp["operations"] if op["name"] == "forward")


@unittest.skipUnless(analyze_available(), "no prof binary")
class RepeatedRuns(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="prof-compare-")
        cls.sides = {name: os.path.join(cls.tmp, name) for name in ("same1", "same2", "slow")}
        for d in cls.sides.values():
            os.mkdir(d)
        cls.run_cnn(os.path.join(cls.tmp, "warm-up.prof"), slow=False)
        for i in range(SAME_RUNS):
            cls.record_round(with_slow=i >= SAME_RUNS - SLOW_RUNS)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    rounds = 0

    @classmethod
    def record_round(cls, with_slow=True):
        """One more run of the same sides, and of the slow one: the two same
        sides in turns, the slow one last, so that each same side follows the
        slow one in every other round (turning all three by one had same1
        follow it in two rounds of three, and same1 and same2 were once told
        apart). The rounds without the slow side come first, for the same
        reason."""
        i = RepeatedRuns.rounds
        RepeatedRuns.rounds += 1
        same = ["same1", "same2"] if i % 2 == 0 else ["same2", "same1"]
        for name in same + (["slow"] if with_slow else []):
            cls.run_cnn(os.path.join(cls.sides[name], "run%d.prof" % i), slow=name == "slow")

    @classmethod
    def run_cnn(cls, out, slow):
        args = [os.path.join(HERE, "cnn.py"), out, str(STEPS)]
        r = run_python(args + (["--slow-forward"] if slow else []))
        if r.returncode != 0:
            raise AssertionError("cnn.py: status %d: %s" % (r.returncode, r.stderr))

    def slowdown_measured(self, before):
        """The slow side against `before`, measured again (a round more a
        side, up to MORE_ROUNDS in all) while the machine's load swamps it:
        the verdict, not the machine, is under test. What is waited for is
        the forward pass shown slower, not any regression: a step time
        shown slower while forward's runs still overlap (p = 0.0101 against
        alpha 0.01, three runs a side, once) fails the run already."""
        while RepeatedRuns.more_rounds < MORE_ROUNDS:
            r = compare("--format", "json", "--fail-on-regression", "10", before,
                        self.sides["slow"])
            if r.returncode == 1 and forward_of(json.loads(r.stdout))["status"] == "slower":
                return
            RepeatedRuns.more_rounds += 1
            self.record_round()

    more_rounds = 0

    def json_of(self, before, after, status):
        r = compare("--format", "json", "--fail-on-regression", "10", before, after)
        self.assertEqual(r.returncode, status, "status %d; stderr: %s; regression: %s" % (
            r.returncode, r.stderr, r.stdout[-1500:]))
        return json.loads(r.stdout)

    def test_same_loop_is_quiet(self):
        cmp = self.json_of(self.sides["same1"], self.sides["same2"], 0)
        self.assertEqual(cmp["method"], "between_runs")
        self.assertEqual(cmp["before"]["runs"], cmp["after"]["runs"])
        self.assertIn(cmp["before"]["runs"], range(SAME_RUNS, SAME_RUNS + MORE_ROUNDS + 1))
        self.assertFalse(cmp["step_time_test"]["significant"], cmp["step_time_test"])
        flagged = [op["name"] for op in cmp["operations"] if op["significant"]]
        self.assertEqual(flagged, [])
        self.assertFalse(cmp["regression"]["regressed"])
        self.assertFalse(any("different commands" in n for n in cmp["notes"]), cmp["notes"])

    def test_slower_forward_fails(self):
        self.slowdown_measured(self.sides["same1"])
        cmp = self.json_of(self.sides["same1"], self.sides["slow"], 1)
        forward = forward_of(cmp)
        self.assertEqual(forward["status"], "slower", forward)
        self.assertEqual(forward["method"], "speed_adjusted")
        self.assertGreater(forward["relative"], 0.15)
        self.assertGreater(forward["relative_to_run"], 0.15)
        reasons = [r["name"] for r in cmp["regression"]["reasons"]]
        self.assertIn("forward", reasons)

    def test_text_names_the_slower_forward(self):
        self.slowdown_measured(self.sides["same2"])
        r = compare("--fail-on-regression", "10", self.sides["same2"], self.sides["slow"])
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("FAILED", r.stdout)
        self.assertRegex(r.stdout, r"\n  forward .* slower\n")

    def test_one_run_a_side_says_run_to_run_is_unknown(self):
        one = os.path.join(self.sides["same1"], "run0.prof")
        other = os.path.join(self.sides["same2"], "run0.prof")
        r = compare("--fail-on-regression", "10", one, other)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        self.assertIn("run-to-run", r.stdout.replace("\n    ", " "))
        cmp = self.json_of(one, other, r.returncode)
        self.assertEqual(cmp["method"], "within_run")
        self.assertEqual(cmp["step_time_test"]["method"], "within_run")


if __name__ == "__main__":
    unittest.main()
