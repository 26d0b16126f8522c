import pytest

from sim.inputs.errors import UserError
from sim.inputs.units import fmt_bytes, parse_bytes, parse_count, parse_count_list


@pytest.mark.parametrize("text,value", [("1000000", 10**6), ("1_000_000", 10**6), ("1,000,000", 10**6),
                                        ("1e6", 10**6), ("2^20", 2**20), ("2**26", 2**26), ("4M", 4 * 10**6),
                                        ("64k", 64_000), (" 7 ", 7), ("-5", -5)])
def test_counts(text, value):
    assert parse_count(text) == value


@pytest.mark.parametrize("text", ["", "abc", "1.5", "2^", "2^99", "1e400", "five"])
def test_bad_counts(text):
    with pytest.raises(UserError):
        parse_count(text)


@pytest.mark.parametrize("text,value", [("49152", 49152), ("48K", 49152), ("48KiB", 49152),
                                        ("100kb", 100_000), ("1MiB", 2**20), ("0", 0)])
def test_bytes(text, value):
    assert parse_bytes(text) == value


@pytest.mark.parametrize("text", ["lots", "1.5", "12 parsecs", ".", "1.2.3K", "-."])
def test_bad_bytes(text):
    with pytest.raises(UserError):
        parse_bytes(text)


def test_lists_and_ranges():
    assert parse_count_list("2^16..2^20") == [2**k for k in range(16, 21)]
    assert parse_count_list("2^16..2^20 x4") == [2**16, 2**18, 2**20]
    assert parse_count_list("1e6; 1048583, 1e6") == [1_000_000, 1_048_583]
    assert parse_count_list("32,4096", upper=None) == [32, 4096]
    for bad in ("", "2^40", "0", "2^20..2^16", "4..8 x1"):
        with pytest.raises(UserError):
            parse_count_list(bad)
    with pytest.raises(UserError, match="block sizes must be at least 1, got '0'"):  # was 'between 1,'
        parse_count_list("0", "block sizes", upper=None)
    with pytest.raises(UserError, match="between 1 and 2,147,483,648"):
        parse_count_list("0")


def test_fmt_bytes_uses_binary_units():
    assert fmt_bytes(96 * 2**20) == "96 MiB"
    assert fmt_bytes(47244640256) == "44 GiB"
    assert fmt_bytes(1536) == "1.5 KiB" and fmt_bytes(512) == "512 B"
