"""The examples in the package's docstrings run, as rustdoc runs the
crates' examples."""

import doctest

import mufc
import mufc._estimator
import mufc.agg
import mufc.parties


def test_the_docstring_examples_run():
    for module in (mufc, mufc._estimator, mufc.agg, mufc.parties):
        failed, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert failed == 0, module.__name__
