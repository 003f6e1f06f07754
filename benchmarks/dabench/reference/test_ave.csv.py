"""DABench reference analysis of data/test_ave.csv (questions 0, 5, 6, 7, 8): computed from the CSV.

Runs in the Loupe kernel with cwd = the block workspace (DATA_DIR: a global set by the caller, else $LOUPE_DATA_DIR,
else "data"). Last stdout line: JSON {"<question id>": "<response in the question's @name[value] format>"}.
"""
import json
import os

import pandas as pd

DATA_DIR = globals().get("DATA_DIR") or os.environ.get("LOUPE_DATA_DIR") or "data"
df = pd.read_csv(os.path.join(DATA_DIR, "test_ave.csv"))
out = {}

# 0: mean fare, two decimals
out["0"] = "@mean_fare[%.2f]" % df["Fare"].mean()

# 5: Pearson r between FamilySize = SibSp + Parch and Fare
fam = df["SibSp"] + df["Parch"]
out["5"] = "@correlation_coefficient[%.2f]" % fam.corr(df["Fare"])

# 6: mean fare per age group (Child 0-12, Teenager 13-19, Adult 20-59, Elderly 60+)
groups = pd.cut(df["Age"], bins=[0, 12, 19, 59, float("inf")], labels=["child", "teenager", "adult", "elderly"], include_lowest=True)
means = df.groupby(groups, observed=False)["Fare"].mean()
out["6"] = " ".join("@mean_fare_%s[%.2f]" % (g, means[g]) for g in ["child", "teenager", "adult", "elderly"])

# 7: "linear regression" classifier (the dataset's answer uses logistic regression), one-hot Sex/Embarked, 80/20, seed 42
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split

feats = df[["Pclass", "Sex", "Age", "SibSp", "Parch", "Fare", "Embarked"]]
X = pd.get_dummies(feats, columns=["Sex", "Embarked"])
X = X.fillna(X.mean(numeric_only=True))
y = df["Survived"]
Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=42)
model = LogisticRegression(max_iter=1000).fit(Xtr, ytr)
out["7"] = "@prediction_accuracy[%.2f]" % accuracy_score(yte, model.predict(Xte))

# 8: mean, median and population standard deviation of Fare per Pclass
parts = []
for c in [1, 2, 3]:
    f = df.loc[df["Pclass"] == c, "Fare"]
    parts.append("@mean_fare_class%d[%.2f] @median_fare_class%d[%.2f] @std_dev_fare_class%d[%.2f]" % (c, f.mean(), c, f.median(), c, f.std(ddof=0)))
out["8"] = " ".join(parts)

print(json.dumps(out))
