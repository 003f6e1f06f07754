"""NCHS Data Brief No. 516: Diabetes prevalence (total, diagnosed, undiagnosed) in adults age 20 and
older, United States, August 2021–August 2023 (files DEMO_L, DIQ_L, GLU_L, GHB_L, BMX_L).

Weights: WTSAF2YR, the fasting-subsample weight in GLU_L (undiagnosed diabetes needs fasting plasma
glucose, measured only in the morning fasting subsample).
Subpopulation: fasting-subsample participants age 20 and older (WTSAF2YR > 0), not pregnant
(RIDEXPRG != 1), who answered DIQ010 yes / no / borderline, with both a fasting glucose (LBXGLU)
and an HbA1c (LBXGH) result: n = 3,184.
Definitions: diagnosed = DIQ010 == 1 ("Other than during pregnancy, ever told you have diabetes");
undiagnosed = not diagnosed and (LBXGLU >= 126 mg/dL or LBXGH >= 6.5 %); total = either.
Groups: age 20–39 / 40–59 / 60+ (RIDAGEYR); BMI (BMXBMI) < 25, 25–<30, >= 30; education DMDEDUC2
1–3 high school or less, 4 some college, 5 college graduate (7/9 dropped).
Crude weighted percentages, one decimal place.

Last stdout line: JSON {"q1": ..., "q15": [...]}. Data under DATA_DIR (default "data").
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


W = "WTSAF2YR"
demo = load("DEMO_L.xpt", ["SEQN", "RIAGENDR", "RIDAGEYR", "RIDEXPRG", "DMDEDUC2"])
diq = load("DIQ_L.xpt", ["SEQN", "DIQ010"])
glu = load("GLU_L.xpt", ["SEQN", W, "LBXGLU"])
ghb = load("GHB_L.xpt", ["SEQN", "LBXGH"])
bmx = load("BMX_L.xpt", ["SEQN", "BMXBMI"])
d = (demo.merge(glu, on="SEQN", how="inner").merge(diq, on="SEQN", how="left")
     .merge(ghb, on="SEQN", how="left").merge(bmx, on="SEQN", how="left"))
d = d[(d.RIDAGEYR >= 20) & (d[W] > 0) & (d.RIDEXPRG != 1) & d.DIQ010.isin([1, 2, 3])
      & d.LBXGLU.notna() & d.LBXGH.notna()]

diagnosed = d.DIQ010 == 1
undiagnosed = ~diagnosed & ((d.LBXGLU >= 126) | (d.LBXGH >= 6.5))
total = diagnosed | undiagnosed

groups = {
    "sex": [d[d.RIAGENDR == 1], d[d.RIAGENDR == 2]],
    "age": [d[d.RIDAGEYR <= 39], d[(d.RIDAGEYR >= 40) & (d.RIDAGEYR <= 59)], d[d.RIDAGEYR >= 60]],
    "bmi": [d[d.BMXBMI < 25], d[(d.BMXBMI >= 25) & (d.BMXBMI < 30)], d[d.BMXBMI >= 30]],
    "edu": [d[d.DMDEDUC2.isin([1, 2, 3])], d[d.DMDEDUC2 == 4], d[d.DMDEDUC2 == 5]],
}
answers = {"q1": pct(d, total, W), "q2": pct(d, diagnosed, W), "q3": pct(d, undiagnosed, W)}
q = 4
for key in ["sex", "age", "bmi", "edu"]:
    for flag in [total, diagnosed, undiagnosed]:
        answers["q%d" % q] = [pct(g, flag, W) for g in groups[key]]
        q += 1
print("n (fasting subsample, adults 20+, not pregnant, glucose and A1c) =", len(d))
print(json.dumps(answers))
