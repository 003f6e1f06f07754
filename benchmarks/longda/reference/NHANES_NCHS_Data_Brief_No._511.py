"""NCHS Data Brief No. 511: Hypertension prevalence, awareness, treatment, and control among adults
age 18 and older, United States, August 2021–August 2023 (files DEMO_L, BPXO_L, BPQ_L).

Weights: WTMEC2YR (blood pressure is measured in the MEC; the questionnaire is merged onto MEC data,
so exam weights apply, as the BPQ_L documentation says).
Subpopulation: participants age 18 and older, not pregnant (RIDEXPRG != 1), with a mean systolic
and diastolic blood pressure (average of the available oscillometric readings BPXOSY1–3 / BPXODI1–3):
n = 6,084 (2,776 men, 3,308 women) as in the brief's data table.
Definitions: hypertension = mean SBP >= 130 or mean DBP >= 80 or taking prescribed BP medication
(BPQ150 == 1, asked of those told they had high blood pressure). Among those with hypertension
who answered BPQ020 yes or no (n = 3,240):
aware = BPQ020 == 1; treated = BPQ150 == 1; controlled = mean SBP < 130 and mean DBP < 80.
Crude weighted percentages, one decimal place.

Last stdout line: JSON {"q1": ..., "q17": [...]}. Data under DATA_DIR (default "data").
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


W = "WTMEC2YR"
AGES = [(18, 39), (40, 59), (60, 200)]
demo = load("DEMO_L.xpt", ["SEQN", "RIAGENDR", "RIDAGEYR", "RIDEXPRG", W])
bpx = load("BPXO_L.xpt", ["SEQN", "BPXOSY1", "BPXOSY2", "BPXOSY3", "BPXODI1", "BPXODI2", "BPXODI3"])
bpq = load("BPQ_L.xpt", ["SEQN", "BPQ020", "BPQ150"])
d = demo.merge(bpx, on="SEQN", how="inner").merge(bpq, on="SEQN", how="left")
d["sbp"] = d[["BPXOSY1", "BPXOSY2", "BPXOSY3"]].mean(axis=1)
d["dbp"] = d[["BPXODI1", "BPXODI2", "BPXODI3"]].mean(axis=1)
d = d[(d.RIDAGEYR >= 18) & (d.RIDEXPRG != 1) & (d[W] > 0) & d.sbp.notna() & d.dbp.notna()]

meds = d.BPQ150 == 1
hyper = (d.sbp >= 130) | (d.dbp >= 80) | meds
aware = d.BPQ020 == 1
controlled = (d.sbp < 130) & (d.dbp < 80)
# Awareness, treatment and control: among those with hypertension who answered BPQ020 yes/no
# (2 "don't know" answers dropped; with them kept q6 is 59.1 instead of the published 59.2).
h = d[hyper & d.BPQ020.isin([1, 2])]
men, women = d[d.RIAGENDR == 1], d[d.RIAGENDR == 2]
hmen, hwomen = h[h.RIAGENDR == 1], h[h.RIAGENDR == 2]


def by_age(sub, flag):
    return [pct(sub[(sub.RIDAGEYR >= lo) & (sub.RIDAGEYR <= hi)], flag, W) for lo, hi in AGES]


answers = {
    "q1": pct(d, hyper, W),
    "q2": [pct(men, hyper, W), pct(women, hyper, W)],
    "q3": by_age(d, hyper),
    "q4": by_age(men, hyper),
    "q5": by_age(women, hyper),
    "q6": pct(h, aware, W),
    "q7": by_age(h, aware),
    "q8": by_age(hmen, aware),
    "q9": by_age(hwomen, aware),
    "q10": pct(h, meds, W),
    "q11": by_age(h, meds),
    "q12": by_age(hmen, meds),
    "q13": by_age(hwomen, meds),
    "q14": pct(h, controlled, W),
    "q15": by_age(h, controlled),
    "q16": by_age(hmen, controlled),
    "q17": by_age(hwomen, controlled),
}
print("n (adults 18+, not pregnant, with mean BP) =", len(d), "; with hypertension (BPQ020 known) =", len(h))
print(json.dumps(answers))
