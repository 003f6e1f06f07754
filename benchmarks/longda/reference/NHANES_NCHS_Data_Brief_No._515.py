"""NCHS Data Brief No. 515: Total and high-density lipoprotein cholesterol in adults, United
States, August 2021–August 2023 (files DEMO_L, TCHOL_L, HDL_L).

Weights: WTPH2YR, the phlebotomy (blood draw) weight shipped in TCHOL_L / HDL_L. The brief says
"Phlebotomy sample weights ... were used"; the MEC weight WTMEC2YR gives 11.4 instead of 11.3 for
q1 (a documentation trap).
Subpopulation: participants age 20 and older with a lab result (LBXTC for total cholesterol,
LBDHDD for HDL) and a positive WTPH2YR. Pregnant women are NOT excluded: n = 5,498 (2,481 men,
3,017 women) as in the brief's data table.
Definitions: high total cholesterol LBXTC >= 240 mg/dL; low HDL-C LBDHDD < 40 mg/dL.
Crude weighted percentages (the brief's "crude" rows), one decimal place.

Last stdout line: JSON {"q1": ..., "q10": [...]}. Data under DATA_DIR (default "data").
"""
import json
import os
from decimal import ROUND_HALF_UP, Decimal

import pandas as pd

DATA_DIR = globals().get("DATA_DIR") or os.environ.get("LOUPE_DATA_DIR") or "data"


def find(name):
    """Path of the data file `name` (case-insensitive) anywhere under DATA_DIR."""
    for root, _dirs, files in os.walk(DATA_DIR):
        for f in files:
            if f.lower() == name.lower():
                return os.path.join(root, f)
    raise FileNotFoundError("%s not found under %s" % (name, os.path.abspath(DATA_DIR)))


def load(name, cols):
    """Columns `cols` of an XPT file. SAS stores 0 in XPT such that pandas reads 5.4e-79: set those to 0."""
    df = pd.read_sas(find(name), format="xport")[cols].copy()
    num = df.select_dtypes("number").columns
    df[num] = df[num].mask(df[num].abs() < 1e-70, 0.0)
    return df


def r1(x):
    """Rounds half up to one decimal place (as SAS/SUDAAN tables do; Python's round() is half-even on binary floats)."""
    return float(Decimal(repr(float(x))).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def pct(df, flag, weight):
    """Weighted percentage (0–100, one decimal) of rows where `flag` is true, among rows of `df`."""
    w = df[weight]
    return r1(100.0 * (w * flag.loc[df.index].astype(float)).sum() / w.sum())


demo = load("DEMO_L.xpt", ["SEQN", "RIAGENDR", "RIDAGEYR"])
W = "WTPH2YR"
AGES = [(20, 39), (40, 59), (60, 200)]


def adults(lab_file, var):
    lab = load(lab_file, ["SEQN", W, var])
    d = demo.merge(lab, on="SEQN", how="inner")
    return d[(d.RIDAGEYR >= 20) & d[var].notna() & (d[W] > 0)]


def by_age(sub, flag):
    return [pct(sub[(sub.RIDAGEYR >= lo) & (sub.RIDAGEYR <= hi)], flag, W) for lo, hi in AGES]


tc = adults("TCHOL_L.xpt", "LBXTC")
high = tc.LBXTC >= 240
hdl = adults("HDL_L.xpt", "LBDHDD")
low = hdl.LBDHDD < 40

answers = {
    "q1": pct(tc, high, W),
    "q2": [pct(tc[tc.RIAGENDR == 1], high, W), pct(tc[tc.RIAGENDR == 2], high, W)],
    "q3": by_age(tc, high),
    "q4": by_age(tc[tc.RIAGENDR == 1], high),
    "q5": by_age(tc[tc.RIAGENDR == 2], high),
    "q6": pct(hdl, low, W),
    "q7": [pct(hdl[hdl.RIAGENDR == 1], low, W), pct(hdl[hdl.RIAGENDR == 2], low, W)],
    "q8": by_age(hdl, low),
    "q9": by_age(hdl[hdl.RIAGENDR == 1], low),
    "q10": by_age(hdl[hdl.RIAGENDR == 2], low),
}
print("n total cholesterol =", len(tc), "; n HDL =", len(hdl))
print(json.dumps(answers))
