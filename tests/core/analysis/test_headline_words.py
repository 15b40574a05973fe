"""The headline a room reads (core/words/headline.py, issue 55): the one rule's sentence without what it rests on, and
a no-answer said as the gap that looked like a lead and that it is within the noise (the why is a hover away)."""
from __future__ import annotations

from crossover_lab.core.words.headline import headline

NO_ANSWER = ("no answer for cpu and cpu1 on this machine: cpu1 looked 1.3x faster at 128 units, but one run's ratio of "
             "the two is uncertain by ±8.3% here (the rule's floor of ±8%; 4 degrees of freedom), so a gap of up to 27% "
             "could be noise there; measure again when the machine is quiet (one run per width; at most a 5% chance of "
             "any false lead over these 2 widths).")


def test_a_no_answer_reads_as_the_gap_seen_and_that_it_is_noise():
    plain, sure = headline(NO_ANSWER)
    assert plain == "no answer for cpu and cpu1 on this machine: cpu1 looked 1.3x faster at 128 units, within the noise here."
    assert sure.startswith("at most a 5% chance of any false lead over these 2 widths")
    wide = headline("No answer for cpu and cpu1 on this machine: cpu looked 2.2x faster at 4,096 units, but each lane's "
                    "batches spread wider than the gap; measure again when the machine is quiet.")[0]
    assert wide == "No answer for cpu and cpu1 on this machine: cpu looked 2.2x faster at 4,096 units, within the noise here."


def test_an_answer_keeps_its_words_and_loses_only_its_parentheses():
    plain, sure = headline("for cpu and cpu1, no answer from 16 to 1,500 units (medians up to 1.4x apart there); cpu1 "
                           "is faster at 4,096 units (1.8x) (up to 2 runs).")
    assert plain == "for cpu and cpu1, no answer from 16 to 1,500 units; cpu1 is faster at 4,096 units."
    assert sure == "medians up to 1.4x apart there; up to 2 runs"
