"""NCHS Data Brief No. 508: Obesity and severe obesity prevalence in adults, United States,
August 2021–August 2023 (NHANES 2021–2023, files DEMO_L + BMX_L).

Weights: WTMEC2YR (MEC examination weight; BMI is measured in the MEC).
Subpopulation: examined participants age 20 and older (RIDAGEYR >= 20), excluding pregnant women
(RIDEXPRG == 1) and anyone without a BMI (BMXBMI missing): n = 5,929 as in the brief's data table.
Definitions: obesity BMI >= 30, severe obesity BMI >= 40. Education DMDEDUC2: 1–3 high school or
less, 4 some college, 5 college graduate or above (7/9 refused/don't know dropped).
Estimates are crude (not age adjusted) weighted percentages, rounded to one decimal place.

Runs in the kernel with cwd = the block workspace; data files are looked up recursively under
DATA_DIR (a global set by the caller's preamble, else $LOUPE_DATA_DIR, else "data").
Last stdout line: JSON {"q1": number, "q2": [men, women], ...}.
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


demo = load("DEMO_L.xpt", ["SEQN", "RIAGENDR", "RIDAGEYR", "RIDEXPRG", "DMDEDUC2", "WTMEC2YR"])
bmx = load("BMX_L.xpt", ["SEQN", "BMXBMI"])
d = demo.merge(bmx, on="SEQN", how="inner")
d = d[(d.RIDAGEYR >= 20) & (d.RIDEXPRG != 1) & d.BMXBMI.notna() & (d.WTMEC2YR > 0)]

obese = d.BMXBMI >= 30
severe = d.BMXBMI >= 40
men = d[d.RIAGENDR == 1]
women = d[d.RIAGENDR == 2]
ages = [d[(d.RIDAGEYR >= 20) & (d.RIDAGEYR <= 39)], d[(d.RIDAGEYR >= 40) & (d.RIDAGEYR <= 59)], d[d.RIDAGEYR >= 60]]
edu = [d[d.DMDEDUC2.isin([1, 2, 3])], d[d.DMDEDUC2 == 4], d[d.DMDEDUC2 == 5]]


def by_age(sub, flag):
    return [pct(sub[(sub.RIDAGEYR >= lo) & (sub.RIDAGEYR <= hi)], flag, "WTMEC2YR") for lo, hi in [(20, 39), (40, 59), (60, 200)]]


W = "WTMEC2YR"
answers = {
    "q1": pct(d, obese, W),
    "q2": [pct(men, obese, W), pct(women, obese, W)],
    "q3": [pct(a, obese, W) for a in ages],
    "q4": [pct(e, obese, W) for e in edu],
    "q5": pct(d, severe, W),
    "q6": [pct(a, severe, W) for a in ages],
    "q7": [pct(men, severe, W), pct(women, severe, W)],
    "q8": by_age(men, severe),
    "q9": by_age(women, severe),
}
print("n (adults 20+, not pregnant, with BMI) =", len(d))
print(json.dumps(answers))
