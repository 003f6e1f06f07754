"""DABench reference analysis of data/GODREJIND.csv (questions 9, 10, 11, 14): computed from the CSV.

Runs in the Loupe kernel with cwd = the block workspace (DATA_DIR: a global set by the caller, else $LOUPE_DATA_DIR,
else "data"). Last stdout line: JSON {"<question id>": "<response in the question's @name[value] format>"}.
"""
import json
import os

import pandas as pd
from scipy import stats

DATA_DIR = globals().get("DATA_DIR") or os.environ.get("LOUPE_DATA_DIR") or "data"
df = pd.read_csv(os.path.join(DATA_DIR, "GODREJIND.csv"))
out = {}

# 9: mean Close Price
out["9"] = "@mean_close_price[%.2f]" % df["Close Price"].mean()

# 10: Shapiro-Wilk on Total Traded Quantity, alpha 0.05
p = stats.shapiro(df["Total Traded Quantity"]).pvalue
out["10"] = "@is_normal[%s]" % ("yes" if p > 0.05 else "no")

# 11: Pearson r between High Price and Low Price, linear if p < 0.05 and |r| >= 0.5
r, p = stats.pearsonr(df["High Price"], df["Low Price"])
kind = ("linear" if abs(r) >= 0.5 else "nonlinear") if p < 0.05 else "none"
out["11"] = "@correlation_coefficient[%.2f] @p_value[%.4f] @relationship_type[%s]" % (r, p, kind)

# 14: Price Range = High Price - Low Price: mean, median, standard deviation
pr = df["High Price"] - df["Low Price"]
out["14"] = "@price_range_mean[%.2f] @price_range_median[%.2f] @price_range_std_dev[%.2f]" % (pr.mean(), pr.median(), pr.std())

print(json.dumps(out))
