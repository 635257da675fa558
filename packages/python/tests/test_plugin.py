"""The pytest plugin, in inner pytest sessions (pytester, each a fresh
python -m pytest): loaded through the entry point, its options and ini
settings, starting nothing unless asked, and working without azure-cosmos
until cosmos_database is used."""

from __future__ import annotations

import pytest

TIMEOUT = 300  # seconds for one inner session: generous on a slow machine

# An inner test that reports the emulator's settings as the fixture made it.
REPORT = """
import cosmos_emulator as module

def test_report(cosmos_emulator):
    try:
        cosmos_emulator.now()
        clock = "manual"
    except module.ControlError as error:
        assert error.status == 404
        clock = "system"
    assert clock == cosmos_emulator.clock
    scheme = cosmos_emulator.endpoint.split(":")[0]
    assert (cosmos_emulator.certificate is not None) == (scheme == "https")
    print(f"REPORT clock={clock} scheme={scheme}")
"""


def run(pytester, *args):
    return pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider", *args, timeout=TIMEOUT)


def test_the_plugin_is_loaded_through_its_entry_point(pytestconfig):
    plugin = pytestconfig.pluginmanager.get_plugin("cosmos_emulator")
    assert plugin is not None and plugin.__name__ == "cosmos_emulator.pytest_plugin"
    dists = {dist.project_name for _, dist in pytestconfig.pluginmanager.list_plugin_distinfo()}
    assert "cosmos-emulator" in dists or "cosmos_emulator" in dists


def test_help_lists_the_options_and_ini_settings(pytester):
    result = pytester.runpytest_subprocess("--help", timeout=TIMEOUT)
    result.stdout.fnmatch_lines(
        [
            "*--cosmos-emulator-clock*",
            "*--cosmos-emulator-tls*",
            "*cosmos_emulator_clock*",
            "*cosmos_emulator_tls*",
        ]
    )


def test_defaults_manual_clock_and_http(pytester):
    pytester.makepyfile(test_inner=REPORT)
    result = run(pytester)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*REPORT clock=manual scheme=http*"])


def test_command_line_options(pytester):
    pytester.makepyfile(test_inner=REPORT)
    result = run(pytester, "--cosmos-emulator-clock", "system", "--cosmos-emulator-tls")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*REPORT clock=system scheme=https*"])


def test_ini_settings(pytester):
    pytester.makeini("[pytest]\ncosmos_emulator_clock = system\ncosmos_emulator_tls = true\n")
    pytester.makepyfile(test_inner=REPORT)
    result = run(pytester)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*REPORT clock=system scheme=https*"])


def test_the_command_line_wins_over_the_ini_file(pytester):
    pytester.makeini("[pytest]\ncosmos_emulator_clock = system\n")
    pytester.makepyfile(test_inner=REPORT)
    result = run(pytester, "--cosmos-emulator-clock", "manual")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*REPORT clock=manual scheme=http*"])


def test_a_bad_setting_stops_the_run_with_a_usage_error(pytester):
    pytester.makeini("[pytest]\ncosmos_emulator_clock = wall\n")
    pytester.makepyfile(test_inner=REPORT)
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*cosmos_emulator_clock = 'wall': expected one of manual, system*"])
    result = run(pytester, "--cosmos-emulator-clock", "wall")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*invalid choice: 'wall'*"])


def test_nothing_starts_unless_a_test_asks(pytester, monkeypatch):
    # With no binary anywhere to be found, starting would fail: the run passes
    # because no test uses the fixtures.
    monkeypatch.setenv("COSMOS_EMULATOR_BINARY", "/nonexistent/cosmos-emulator")
    pytester.makepyfile(test_inner="def test_plain():\n    assert 1 + 1 == 2\n")
    result = run(pytester)
    result.assert_outcomes(passed=1)
    # ...and a test that does ask fails with the reason.
    pytester.makepyfile(test_asks="def test_asks(cosmos_emulator):\n    pass\n")
    result = run(pytester)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*EmulatorError*/nonexistent/cosmos-emulator*does not exist*"])


def test_without_azure_cosmos_only_what_needs_it_fails(pytester):
    # Hide azure-cosmos from the inner session, as if it were not installed.
    pytester.makeconftest(
        """
        import sys

        class NoAzure:
            def find_spec(self, name, path=None, target=None):
                if name == "azure" or name.startswith("azure."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, NoAzure())
        """
    )
    pytester.makepyfile(
        test_inner="""
        import pytest

        def test_the_emulator_works_without_the_sdk(cosmos_emulator):
            assert cosmos_emulator.advance(10) > 0
            with pytest.raises(ImportError, match="pip install azure-cosmos"):
                cosmos_emulator.client()

        def test_a_database_needs_the_sdk(cosmos_database):
            pass
        """
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*ImportError: Emulator.client() needs the official SDK, azure-cosmos*"])


def _readme_blocks():
    import pathlib
    import re

    readme = pathlib.Path(__file__).resolve().parent.parent / "README.md"
    return re.findall(r"```python\n(.*?)```", readme.read_text(), re.S)


def test_the_readmes_first_example_passes(pytester):
    first = _readme_blocks()[0]
    assert "def test_" in first and "cosmos_database" in first
    pytester.makepyfile(test_readme=first)
    result = run(pytester)
    result.assert_outcomes(passed=1)


def test_the_readmes_snapshot_example_works(pytester):
    seeded = next(block for block in _readme_blocks() if 'snapshot("seeded")' in block)
    pytester.makepyfile(
        test_readme=seeded.replace("    ...                                      # containers, items\n", "")
        + """

def test_one(shop):
    shop.create_container("added", {"paths": ["/pk"], "kind": "Hash"})

def test_two(shop):
    assert [c["id"] for c in shop.list_containers()] == []
"""
    )
    result = run(pytester)
    result.assert_outcomes(passed=2)
