"""Every prediction's confidence (sim.model.confidence) is the same on the window's surfaces as in
`explain --json`: the Verdicts, Two GPUs, the export's notes (summary page) and session.json."""

import json

import main
from gui.window_export import _notes
from tests.gui.conftest import drawn


def test_the_window_and_explain_agree_on_a_prediction_s_confidence(win, capsys):
    w = win("V100", 2**24, 256)
    assert main.main(["explain", "--gpu", "V100", "--elements", str(2**24), "--block", "256",
                      "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)["confidence"]
    assert cli["short"] == "assumed from H200"
    session = w.session_dict()  # what the export writes as session.json
    assert session["latency_model"]["confidence"] == cli
    assert cli["label"] in drawn(w.teach.verdicts_view).list.toPlainText()
    time_notes = dict(_notes(w))["Time"]  # the summary page's and summary.html's notes
    assert cli["label"] in time_notes
    drawn(w.teach.compare_view).other.setCurrentText("H200")
    drawn(w.teach.compare_view)
    assert cli["short"] in w.teach.compare_view.sides[0].facts.text()
    assert "measured on the H200" in w.teach.compare_view.sides[1].facts.text()
    sides = w.session_dict()["second_gpu"]["confidence"]
    assert sides["V100"] == cli and sides["H200"]["level"] == "measured"
