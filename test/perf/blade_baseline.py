"""BLADE's aggregation computed the way BLADE's own Python computes it: the baseline of test/perf/blade.perf.ts.

Follows behavioral-data/BLADE at commit 6118fa8d5007b91aa8c91c518182db82446a4547 (written for Loupe, not copied):
  - blade_bench/eval/get_model_metrics.py, GetFinalMetricsForModel.analysis_metric_bootstrap_calculation:
    `dataset_runs = {k: v.get_single_run_metrics() ...}`; per sample, every dataset's runs resampled with
    `random.choices(runs, k=len(runs))` and scored by `calculate_analysis_scores`; then the point estimate on the
    runs as given, `np.quantile(..., [0.025, 0.975])` and `np.mean` of the samples;
  - blade_bench/eval/metrics/final_metrics.py: `calculate_hit_rate` (per dataset `np.asarray([...]).mean()`, then
    `np.mean` over datasets), `calculate_coverage` (per dataset a set of the matched items of `runs[:k]` over the GT
    count; models over `min(num_mspecs1[_unique], len(runs[:k]))`), `harmonic_mean` (no zero guard), `get_weights`
    and the weighted / unweighted scores (the unweighted one with BLADE's `+ 0.5 +`);
  - blade_bench/eval/datamodel/run.py: `SingleRunMetrics` (hit rates as properties computed on every access:
    `len(matched_cvar2) / max(num_cvars2, 1)`, `len(matched_model) / 1`, ...) and
    `MetricsAcrossRuns.get_single_run_metrics` (the successful runs, then one empty run per generation failure).
Differences that do not change the computation: plain classes instead of pydantic models (Debian's python3 has no
pydantic), and `random.seed(seed)` first (BLADE leaves Python's `random` unseeded).

Protocol: one JSON object per line on stdin, one JSON answer per line on stdout.
  {"cmd": "load", "datasets": [<MetricsAcrossRuns fields + "dataset">, ...]}  ->  {"datasets": n}
  {"cmd": "run", "k": 10, "samples": 1000, "seed": 0}  ->  {"ms": ..., "point": {...}, "bootstrap": {...}}
`ms` is measured in this process with time.perf_counter around the computation only (from the loaded
MetricsAcrossRuns-shaped records to the bootstrap result): interpreter start-up, imports and JSON parsing are not in
it. The per-type hit rates and coverages in "point" are computed after the clock stops (BLADE's
calculate_analysis_scores does not return them). NaN is sent as null.
"""
import json
import math
import random
import sys
import time
from collections import defaultdict

import numpy as np

GENERATION_FAILED = 2  # RunResultModes.LM_GENERATION_FAILED


class SingleRunMetrics:
    """One run as BLADE's run.py SingleRunMetrics: matched item lists, counts, hit rates as properties."""

    def __init__(self, matched_model=None, matched_model_cvar=None, matched_vspec=None, matched_gspec=None,
                 matched_vspec2=None, matched_gspec2=None, matched_cvar=None, matched_cvar2=None, num_tspecs2=0,
                 num_cvars2=0, num_tspecs1=0, num_mspecs1=0, num_mspecs1_unique=0, num_cvars1=0):
        self.matched_model = matched_model if matched_model is not None else []
        self.matched_model_cvar = matched_model_cvar if matched_model_cvar is not None else []
        self.matched_vspec = matched_vspec if matched_vspec is not None else []
        self.matched_gspec = matched_gspec if matched_gspec is not None else []
        self.matched_vspec2 = matched_vspec2 if matched_vspec2 is not None else []
        self.matched_gspec2 = matched_gspec2 if matched_gspec2 is not None else []
        self.matched_cvar = matched_cvar if matched_cvar is not None else []
        self.matched_cvar2 = matched_cvar2 if matched_cvar2 is not None else []
        self.num_tspecs2 = num_tspecs2
        self.num_cvars2 = num_cvars2
        self.num_tspecs1 = num_tspecs1
        self.num_mspecs1 = num_mspecs1
        self.num_mspecs1_unique = num_mspecs1_unique
        self.num_cvars1 = num_cvars1

    @property
    def hit_rate_models(self):
        return len(self.matched_model) / 1

    @property
    def hit_rate_models_cvar(self):
        return len(self.matched_model_cvar) / 1

    @property
    def hit_rate_vspecs(self):
        return len(self.matched_vspec2) / max(self.num_tspecs2, 1)

    @property
    def hit_rate_gspecs(self):
        return len(self.matched_gspec2) / max(self.num_tspecs2, 1)

    @property
    def hit_rate_cvars(self):
        return len(self.matched_cvar2) / max(self.num_cvars2, 1)


def single_run_metrics(m):
    """MetricsAcrossRuns.get_single_run_metrics: the successful runs (m's lists), then an empty run per generation failure."""
    def nth(n):
        return SingleRunMetrics(
            matched_model=m["matched_models"][n], matched_model_cvar=m["matched_models_cvar"][n],
            matched_vspec=m["matched_vspecs"][n], matched_gspec=m["matched_gspecs"][n],
            matched_vspec2=m["matched_vspecs2"][n], matched_gspec2=m["matched_gspecs2"][n],
            matched_cvar=m["matched_cvars"][n], matched_cvar2=m["matched_cvars2"][n],
            num_tspecs2=m["num_tspecs2"][n], num_cvars2=m["num_cvars2"][n],
            num_tspecs1=m["num_tspecs1"], num_mspecs1=m["num_mspecs1"],
            num_mspecs1_unique=m["num_mspecs1_unique"], num_cvars1=m["num_cvars1"])

    ret = [nth(i) for i in range(len(m["num_cvars2"]))]
    failed = sum([s in [GENERATION_FAILED] for s in m["status"]])
    empty = [SingleRunMetrics(num_tspecs1=m["num_tspecs1"], num_cvars1=m["num_cvars1"], num_mspecs1=m["num_mspecs1"],
                              num_mspecs1_unique=m["num_mspecs1_unique"]) for _ in range(failed)]
    return ret + empty


def calculate_coverage(dataset_runs, k=10):
    """final_metrics.py calculate_coverage: per dataset, unique matched GT items of the first k runs over the GT count."""
    def helper(runs):
        return {
            "cvar": len(set([x for run in runs for x in run.matched_cvar])) / runs[0].num_cvars1,
            "model": len(set([x for run in runs for x in run.matched_model])) / min(runs[0].num_mspecs1_unique, len(runs)),
            "model_cvar": len(set([x for run in runs for x in run.matched_model_cvar])) / min(runs[0].num_mspecs1, len(runs)),
            "transform_graph": len(set([x for run in runs for x in run.matched_gspec])) / runs[0].num_tspecs1,
            "transform_value": len(set([x for run in runs for x in run.matched_vspec])) / runs[0].num_tspecs1,
        }

    metrics = defaultdict(list)
    for _, runs in dataset_runs.items():
        for name, v in helper(runs[:k]).items():
            metrics[name].append(v)
    return {name: np.mean(v) for name, v in metrics.items()}


def calculate_hit_rate(dataset_runs):
    """final_metrics.py calculate_hit_rate: per dataset the mean run hit rate, then the mean over datasets."""
    def helper(runs):
        return {
            "cvar": np.asarray([run.hit_rate_cvars for run in runs]).mean(),
            "model": np.asarray([run.hit_rate_models for run in runs]).mean(),
            "model_cvar": np.asarray([run.hit_rate_models_cvar for run in runs]).mean(),
            "transform_graph": np.asarray([run.hit_rate_gspecs for run in runs]).mean(),
            "transform_value": np.asarray([run.hit_rate_vspecs for run in runs]).mean(),
        }

    metrics = defaultdict(list)
    for _, runs in dataset_runs.items():
        for name, v in helper(runs).items():
            metrics[name].append(v)
    return {name: np.mean(v) for name, v in metrics.items()}


def harmonic_mean(a, b):
    return 2 * a * b / (a + b)


def calculate_analysis_scores(coverage_k, dataset_runs):
    """final_metrics.py calculate_analysis_scores: (weighted F1, unweighted F1) of one set of runs per dataset."""
    hit = calculate_hit_rate(dataset_runs)
    cov = calculate_coverage(dataset_runs, k=coverage_k)
    totals = {
        "tspecs": sum(v[0].num_tspecs1 for v in dataset_runs.values()),
        "cvars": sum(v[0].num_cvars1 for v in dataset_runs.values()),
        "mspecs": sum(min(v[0].num_mspecs1, coverage_k) for v in dataset_runs.values()),
        "mspecs_unique": sum(min(v[0].num_mspecs1_unique, coverage_k) for v in dataset_runs.values()),
    }
    total = sum(totals.values())
    weights = {
        "cvar": totals["cvars"] / total,
        "model": totals["mspecs_unique"] / total,
        "model_cvar": totals["mspecs"] / total,
        "gspec": totals["tspecs"] / (2 * total),
        "vspec": totals["tspecs"] / (2 * total),
    }
    f1_cvars = harmonic_mean(hit["cvar"], cov["cvar"])
    f1_models = harmonic_mean(hit["model"], cov["model"])
    f1_models_cvars = harmonic_mean(hit["model_cvar"], cov["model_cvar"])
    f1_gspecs = harmonic_mean(hit["transform_graph"], cov["transform_graph"])
    f1_vspecs = harmonic_mean(hit["transform_value"], cov["transform_value"])
    unweighted = (f1_cvars + f1_models + f1_models_cvars + 0.5 * f1_gspecs + 0.5 + f1_vspecs) / 4
    weighted = (weights["cvar"] * f1_cvars + weights["model"] * f1_models + weights["model_cvar"] * f1_models_cvars
                + weights["gspec"] * f1_gspecs + weights["vspec"] * f1_vspecs)
    return weighted, unweighted


def bootstrap_calculation(metrics_objs, coverage_k, num_samples, cis=(0.025, 0.975)):
    """get_model_metrics.py analysis_metric_bootstrap_calculation, returning the samples' summary."""
    dataset_runs = {k: single_run_metrics(v) for k, v in metrics_objs.items()}
    weighted_samples = []
    unweighted_samples = []
    for _ in range(num_samples):
        new_dataset_runs = {}
        for k, runs in dataset_runs.items():
            assert len(runs) > coverage_k, "Number of runs should be greater than coverage k"
            new_dataset_runs[k] = random.choices(runs, k=len(runs))
        w, u = calculate_analysis_scores(coverage_k, new_dataset_runs)
        weighted_samples.append(w)
        unweighted_samples.append(u)
    weighted_mean, unweighted_mean = calculate_analysis_scores(coverage_k, dataset_runs)
    cis_weighted = np.quantile(weighted_samples, list(cis))
    cis_unweighted = np.quantile(unweighted_samples, list(cis))
    return dataset_runs, {
        "mean_weighted": weighted_mean,
        "mean_unweighted": unweighted_mean,
        "mean_bootstrapped_weighted": np.mean(weighted_samples),
        "mean_bootstrapped_unweighted": np.mean(unweighted_samples),
        "ci_weighted": list(cis_weighted),
        "ci_unweighted": list(cis_unweighted),
        "sd_bootstrapped_weighted": np.std(weighted_samples, ddof=1),
    }


def plain(x):
    """JSON-safe value: numpy scalars to float, NaN to None."""
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    x = float(x)
    return None if math.isnan(x) else x


def main():
    metrics_objs = None
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["cmd"] == "load":
            metrics_objs = {d["dataset"]: d for d in msg["datasets"]}
            answer = {"datasets": len(metrics_objs)}
        elif msg["cmd"] == "run":
            if metrics_objs is None:
                raise ValueError("'run' before 'load'")
            random.seed(msg["seed"])
            t0 = time.perf_counter()
            dataset_runs, score = bootstrap_calculation(metrics_objs, msg["k"], msg["samples"])
            ms = (time.perf_counter() - t0) * 1000
            hit = calculate_hit_rate(dataset_runs)
            cov = calculate_coverage(dataset_runs, k=msg["k"])
            answer = {"ms": ms, "score": plain(score), "hitRate": plain(hit), "coverage": plain(cov)}
        else:
            raise ValueError("unknown command %r" % msg["cmd"])
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
