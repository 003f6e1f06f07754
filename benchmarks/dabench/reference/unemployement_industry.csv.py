"""DABench reference analysis of data/unemployement_industry.csv (questions 18, 19, 23): computed from the CSV.

Runs in the Loupe kernel with cwd = the block workspace (DATA_DIR: a global set by the caller, else $LOUPE_DATA_DIR,
else "data"). Last stdout line: JSON {"<question id>": "<response in the question's @name[value] format>"}.
"""
import json
import os

import pandas as pd
from scipy import stats

DATA_DIR = globals().get("DATA_DIR") or os.environ.get("LOUPE_DATA_DIR") or "data"
df = pd.read_csv(os.path.join(DATA_DIR, "unemployement_industry.csv"))
out = {}

# 18: Mar.2019 without missing values and IQR outliers: mean and standard deviation
x = df["Mar.2019"].dropna()
q1, q3 = x.quantile(0.25), x.quantile(0.75)
iqr = q3 - q1
x = x[(x >= q1 - 1.5 * iqr) & (x <= q3 + 1.5 * iqr)]
out["18"] = "@mean_mar_2019[%.2f] @sd_mar_2019[%.2f]" % (x.mean(), x.std())

# 19: normal if the Fisher-Pearson skewness of Mar.2020 is within [-0.5, 0.5]
s = stats.skew(df["Mar.2020"].dropna())
out["19"] = "@is_normal[%s]" % ("Yes" if -0.5 <= s <= 0.5 else "No")

# 23: linear regression Mar.2020 ~ Mar.2019, 70/30 split with seed 42, test MSE
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_squared_error
from sklearn.model_selection import train_test_split

d = df[["Mar.2019", "Mar.2020"]].dropna()
Xtr, Xte, ytr, yte = train_test_split(d[["Mar.2019"]], d["Mar.2020"], test_size=0.3, random_state=42)
mse = mean_squared_error(yte, LinearRegression().fit(Xtr, ytr).predict(Xte))
out["23"] = "@Mean_Squared_Error[%.2f]" % mse

print(json.dumps(out))
