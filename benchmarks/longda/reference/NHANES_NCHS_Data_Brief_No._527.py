"""NCHS Data Brief No. 527: Depression prevalence in adolescents and adults, United States, August
2021–August 2023 (files DEMO_L, DPQ_L, HUQ_L).

Weights: WTMEC2YR (the PHQ-9 is given in the MEC by audio computer-assisted self-interview).
Subpopulation: examined participants with all nine PHQ-9 items (DPQ010–DPQ090) answered 0–3.
Depression = PHQ-9 sum >= 10. Difficulty (q9–q12): DPQ100 among those with depression (0 not
difficult, 1 somewhat, 2–3 very/extremely). Counseling (q13–q14): HUQ090 == 1 among those with
depression who answered HUQ090 yes/no. Family income: INDFMPIR (DEMO_L, ratio to the poverty
guideline) < 1, 1–<2, 2–<4, >= 4.
Crude weighted percentages, one decimal place.

KNOWN GAP: the public DPQ_L file in the snapshot covers ages 18 and older only; the brief's
adolescents (12–17) are absent. So the "12–19" elements (q2, q4, q5 first element) are computed
from 18–19-year-olds only, and the overall, sex, income, difficulty and counseling estimates are
for ages 18+ rather than 12+. The adult age groups (20–39, 40–59, 60+) reproduce the brief exactly.

Last stdout line: JSON {"q1": ..., "q14": [...]}. Data under DATA_DIR (default "data").
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
ITEMS = ["DPQ0%d0" % i for i in range(1, 10)]
demo = load("DEMO_L.xpt", ["SEQN", "RIAGENDR", "RIDAGEYR", "INDFMPIR", W])
dpq = load("DPQ_L.xpt", ["SEQN"] + ITEMS + ["DPQ100"])
huq = load("HUQ_L.xpt", ["SEQN", "HUQ090"])
d = demo.merge(dpq, on="SEQN", how="inner").merge(huq, on="SEQN", how="left")
d = d[d[ITEMS].isin([0, 1, 2, 3]).all(axis=1) & (d[W] > 0)]
d["phq9"] = d[ITEMS].sum(axis=1)
dep = d.phq9 >= 10
men, women = d[d.RIAGENDR == 1], d[d.RIAGENDR == 2]


def by_age(s):
    return [pct(s[(s.RIDAGEYR >= lo) & (s.RIDAGEYR <= hi)], dep, W) for lo, hi in [(12, 19), (20, 39), (40, 59), (60, 200)]]


def by_income(s):
    groups = [s[s.INDFMPIR < 1], s[(s.INDFMPIR >= 1) & (s.INDFMPIR < 2)], s[(s.INDFMPIR >= 2) & (s.INDFMPIR < 4)], s[s.INDFMPIR >= 4]]
    return [pct(g, dep, W) for g in groups]


depressed = d[dep]
diff = depressed[depressed.DPQ100.isin([0, 1, 2, 3])]


def difficulty(s):
    return [pct(s, s.DPQ100 == 0, W), pct(s, s.DPQ100 == 1, W), pct(s, s.DPQ100 >= 2, W)]


couns = depressed[depressed.HUQ090.isin([1, 2])]
got = couns.HUQ090 == 1

answers = {
    "q1": pct(d, dep, W),
    "q2": by_age(d),
    "q3": [pct(women, dep, W), pct(men, dep, W)],
    "q4": by_age(women),
    "q5": by_age(men),
    "q6": by_income(d),
    "q7": by_income(women),
    "q8": by_income(men),
    "q9": pct(diff, diff.DPQ100 >= 1, W),
    "q10": difficulty(diff),
    "q11": difficulty(diff[diff.RIAGENDR == 2]),
    "q12": difficulty(diff[diff.RIAGENDR == 1]),
    "q13": pct(couns, got, W),
    "q14": [pct(couns[couns.RIAGENDR == 2], got, W), pct(couns[couns.RIAGENDR == 1], got, W)],
}
print("n (complete PHQ-9; ages %d-%d in this file) =" % (d.RIDAGEYR.min(), d.RIDAGEYR.max()), len(d))
print(json.dumps(answers))
