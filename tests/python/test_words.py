"""Counts in messages (the Ray runner's summary line, `repr(Job)`) take the noun's number, as the
page writes them, instead of "rank(s)"."""
from memlens._words import plural


def test_one_takes_the_singular_every_other_count_the_plural():
    assert plural(1, "rank") == "1 rank"
    assert plural(0, "rank") == "0 ranks"
    assert plural(2, "warning") == "2 warnings"
    assert plural(1024, "rank") == "1,024 ranks"


def test_irregular_plurals_are_given():
    assert plural(3, "process", "processes") == "3 processes"
    assert plural(1, "process", "processes") == "1 process"

