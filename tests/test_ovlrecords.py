#!/usr/bin/env python3
"""Unit test of tools/ovlrecords.py (the schema and reader of ovl's JSON records) and of the scripts
that read records through it: cluster/summarize.py end to end on synthetic runs, old and new
records mixed; bench/validate_models.py's reader; tools/ovl-plot sweep and smpi/plot_smpi.py on
synthetic inputs (when matplotlib loads).
usage: test_ovlrecords.py [SCRATCH_DIR]"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import ovlrecords  # noqa: E402

SCRATCH = None

# what the C record writer prints for a tune-database entry (tests/test_json.c checks the same text)
C_TUNE = ('{"type":"tune","schema":1,"family":"ssc","n":576,"P":8,"algo":"alg5","ndup":4,"s":0,"c":0,"b":256,'
          '"G":1,"lookahead":0,"t_median":0.0125,"machine":"box"}')
OLD_TUNE = ('{"family":"ssc","n":576,"P":8,"kernel":"alg5","ndup":4,"s":0,"c":0,"b":256,"G":1,"lookahead":0,'
            '"t_median":1.2e-02,"machine":"x"}')
OLD_GEMM = ('{"bench":"gemm","algo":"summa","m":64,"n":64,"k":64,"ranks":4,"plan":"summa b=16 ndup=1",'
            '"t_median":1.0e-03,"gflops_median":0.5,"check":"not checked","relerr":-1.000e+00}')
NEW_GEMM = ('{"type":"gemm","schema":1,"algo":"summa","m":64,"n":64,"k":64,"ranks":4,"plan":"summa b=16 ndup=2",'
            '"t_median":8.0e-04,"gflops_median":0.6,"check":"PASS","relerr":null}')
OLD_PURIFY = '{"cmd":"purify","n":24,"check":"not checked","ref_relerr":-1.000e+00,"t_eig":-1.0,"energy":-76.0}'


def scratch(name):
    return os.path.join(SCRATCH, name)


def write(name, text):
    with open(scratch(name), "w") as f:
        f.write(text)
    return scratch(name)


class Records(unittest.TestCase):
    def test_kind_and_schema(self):
        self.assertEqual(ovlrecords.kind(json.loads(OLD_GEMM)), "gemm")
        self.assertEqual(ovlrecords.kind(json.loads(NEW_GEMM)), "gemm")
        self.assertEqual(ovlrecords.kind(json.loads(OLD_PURIFY)), "purify")
        self.assertEqual(ovlrecords.kind(json.loads(OLD_TUNE)), "tune")
        self.assertEqual(ovlrecords.kind(json.loads(C_TUNE)), "tune")
        self.assertEqual(ovlrecords.kind({"cmd": "tune-sweep"}), "tune-sweep")
        # the names of today's records, and the old rows of `ovl tune --json` under their new name
        for t in ("gemm", "pingpong", "coll", "nbc", "progress", "ssc", "machine", "model", "purify",
                  "tune-candidate", "tune-sweep", "tune"):
            self.assertIn(t, ovlrecords.TYPES)
            self.assertEqual(ovlrecords.kind({"type": t, "schema": 1}), t)
        self.assertEqual(ovlrecords.kind({"cmd": "tune", "rank": 2, "config": "alg5 ndup=4"}), "tune-candidate")
        old_row = ovlrecords.normalize({"cmd": "tune", "rank": 2, "tuner": 0, "t_median_tuner": -1})
        self.assertEqual(old_row["type"], "tune-candidate")
        self.assertIsNone(old_row["t_median_tuner"])
        self.assertIsNone(ovlrecords.kind({"platform": "x"}))
        self.assertIsNone(ovlrecords.kind([1, 2]))
        self.assertEqual(ovlrecords.schema(json.loads(OLD_GEMM)), 0)
        self.assertEqual(ovlrecords.schema(json.loads(C_TUNE)), 1)

    def test_not_measured(self):
        old = ovlrecords.normalize(json.loads(OLD_GEMM))
        self.assertEqual(list(old)[0], "type")
        self.assertEqual(old["type"], "gemm")
        self.assertEqual(old["bench"], "gemm")  # the old key stays
        self.assertIsNone(old["relerr"])
        self.assertIsNone(ovlrecords.normalize(json.loads(NEW_GEMM))["relerr"])
        p = ovlrecords.normalize(json.loads(OLD_PURIFY))
        self.assertIsNone(p["ref_relerr"])
        self.assertIsNone(p["t_eig"])
        self.assertEqual(p["energy"], -76.0)
        # -1 is a value, not a marker, outside the listed fields and in schema 1 records
        self.assertEqual(ovlrecords.normalize({"bench": "gemm", "relerr": 0.0, "t_comm": -1})["t_comm"], -1)
        self.assertEqual(ovlrecords.normalize({"type": "gemm", "schema": 1, "relerr": -1})["relerr"], -1)
        self.assertEqual(ovlrecords.measured(json.loads(OLD_GEMM), "relerr"), None)
        self.assertEqual(ovlrecords.measured(json.loads(OLD_GEMM), "gflops_median"), 0.5)
        self.assertEqual(ovlrecords.normalize({"platform": "x"}), {"platform": "x"})

    def test_old_algorithm_key(self):
        # the kernel algorithm's key is the knob table's "algo"; model records and tune entries of older
        # releases wrote "kernel", read as "algo" (other records' "kernel" keys are left alone)
        self.assertEqual(ovlrecords.normalize(json.loads(OLD_TUNE))["algo"], "alg5")
        self.assertNotIn("kernel", ovlrecords.normalize(json.loads(OLD_TUNE)))
        self.assertEqual(ovlrecords.normalize(json.loads(C_TUNE))["algo"], "alg5")
        old_model = ovlrecords.normalize({"type": "model", "schema": 1, "config": "summa P=4", "kernel": "summa"})
        self.assertEqual(old_model["algo"], "summa")
        both = ovlrecords.normalize({"type": "model", "schema": 1, "kernel": "x", "algo": "summa"})
        self.assertEqual((both["algo"], both["kernel"]), ("summa", "x"))
        self.assertEqual(ovlrecords.normalize({"type": "purify", "kernel": "k"})["kernel"], "k")
        self.assertIn("algo", ovlrecords.TYPES["model"]["fields"])
        self.assertIn("algo", ovlrecords.TYPES["tune"]["fields"])

    def test_every_legacy_type_in_schema(self):
        for t, spec in ovlrecords.TYPES.items():
            self.assertIn(spec["legacy"], ("bench", "cmd", None))  # None: no old tag (files, tune entries)
            for key in spec["not_measured"]:
                self.assertIn(key, spec["fields"], "%s: %s" % (t, key))

    def test_read_file(self):
        p = write("mixed.jsonl", "# a header line\n%s\n\n%s\n%s\n{\"platform\": \"p\"}\n" % (OLD_GEMM, NEW_GEMM, C_TUNE))
        recs = ovlrecords.read_file(p)
        self.assertEqual([ovlrecords.kind(r) for r in recs], ["gemm", "gemm", "tune", None])
        self.assertTrue(all(r["relerr"] is None for r in recs[:2]))
        self.assertEqual(recs[2]["t_median"], 0.0125)
        bad = write("bad.jsonl", "%s\n{\"bench\": oops}\n" % OLD_GEMM)
        with self.assertRaisesRegex(ovlrecords.RecordError, r"bad\.jsonl:2: not JSON"):
            ovlrecords.read_file(bad)
        with self.assertRaisesRegex(ovlrecords.RecordError, r"nope\.jsonl: No such file"):
            ovlrecords.read_file(scratch("nope.jsonl"))
        with self.assertRaisesRegex(ovlrecords.RecordError, "not a regular file"):
            ovlrecords.read_file(SCRATCH)
        empty = write("empty.jsonl", "# nothing\n")
        self.assertEqual(ovlrecords.read_file(empty), [])
        with self.assertRaisesRegex(ovlrecords.RecordError, "no JSON lines"):
            ovlrecords.read_file(empty, require=True)
        with self.assertRaisesRegex(ovlrecords.RecordError, "<t>:2: not JSON"):
            ovlrecords.read_text("x\n{]", "<t>")

    def test_read_rows(self):
        p = write("t.csv", "system,n,tflops\nA,10,1.5\nB,20,2.5\n")
        self.assertEqual(ovlrecords.read_rows(p), [{"system": "A", "n": "10", "tflops": "1.5"},
                                                   {"system": "B", "n": "20", "tflops": "2.5"}])
        q = write("t.jsonl", NEW_GEMM + "\n")
        self.assertEqual(ovlrecords.kind(ovlrecords.read_rows(q)[0]), "gemm")

    def test_dumps(self):
        rec = ovlrecords.normalize(json.loads(OLD_GEMM))
        line = ovlrecords.dumps(rec)
        self.assertNotIn("\n", line)
        self.assertIn('"relerr":null', line)
        self.assertEqual(ovlrecords.parse_line(line), rec)
        with self.assertRaises(ValueError):
            ovlrecords.dumps({"x": float("nan")})


def coll_line(run, b, bw, legacy):
    tag = {"bench": "coll"} if legacy else {"type": "coll", "schema": 1}
    rec = dict(run=run, part="coll", **tag, op="bcast", ranks=8, ppn=2, p=4, ndup=4, backend="mpi", alg="auto",
               bytes=b, iterations=3, cache_bytes=0, mpi="test")
    for i, c in enumerate(("blocking", "ndup_overlap", "ppn_overlap")):
        rec[c] = {"t_min": 1e-3, "t_median": 2e-3, "t_max": 3e-3, "bw_MBps": bw * (1 + i)}
    return json.dumps(rec)


def ssc_line(run, algo, ndup, t, legacy):
    tag = {"bench": "ssc"} if legacy else {"type": "ssc", "schema": 1}
    return json.dumps(dict(run=run, part="d1-5", **tag, algo=algo, ndup=ndup, n=100, ranks=8, grid="2x2x2",
                           backend="mpi", t_min=t * 0.9, t_median=t, t_max=t * 1.1, t_comm_median=t / 2,
                           gflops=1.0, relerr=1e-15, check="PASS", iterations=3, mpi="test"))


class Scripts(unittest.TestCase):
    def test_summarize(self):
        out = tempfile.mkdtemp(dir=SCRATCH)
        with open(os.path.join(out, "coll_bcast_mpi.jsonl"), "w") as f:
            f.write("\n".join([coll_line(1, 1024, 10.0, True), coll_line(2, 1024, 30.0, False),
                               coll_line(1, 4096, 20.0, True), coll_line(2, 4096, 40.0, False)]) + "\n")
        with open(os.path.join(out, "ssc.jsonl"), "w") as f:
            f.write("\n".join([ssc_line(1, "alg4", 1, 2.0, True), ssc_line(1, "alg5", 4, 1.0, True),
                               ssc_line(2, "alg4", 1, 2.0, False), ssc_line(2, "alg5", 4, 0.5, False)]) + "\n")
        with open(os.path.join(out, "coll_platform.json"), "w") as f:
            f.write('{"platform": "synthetic"}\n')
        p = subprocess.run([sys.executable, os.path.join(ROOT, "cluster", "summarize.py"), out], capture_output=True,
                           text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("platform: synthetic", p.stdout)
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        rows = s["coll"]["coll_bcast_mpi"]
        self.assertEqual([r["bytes"] for r in rows], [1024, 4096])
        self.assertEqual(rows[0]["blocking_bw_median"], 20.0)  # median of an old and a new run
        self.assertEqual(rows[1]["ndup_overlap_over_blocking_median"], 2.0)
        alg5 = [r for r in s["ssc"] if r["algo"] == "alg5"][0]
        self.assertEqual(alg5["speedup_median"], 3.0)  # median of 2.0 (old run) and 4.0 (new run)
        med = ovlrecords.read_file(os.path.join(out, "coll_bcast_mpi_median.jsonl"))
        self.assertEqual([ovlrecords.kind(r) for r in med], ["coll", "coll"])
        self.assertNotIn("run", med[0])

    def test_validate_models_reader(self):
        spec = importlib.util.spec_from_file_location("validate_models", os.path.join(ROOT, "bench",
                                                                                      "validate_models.py"))
        vm = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(vm)
        text = "# header\n%s\n{\"cmd\":\"tune\",\"rank\":1,\"tuner\":0,\"t_median_tuner\":-1.0}\n%s\n" % (OLD_GEMM,
                                                                                                           NEW_GEMM)
        recs = vm.jlines(text)
        self.assertEqual([ovlrecords.kind(r) for r in recs], ["gemm", "tune-candidate", "gemm"])
        self.assertIsNone(recs[1]["t_median_tuner"])

    def test_ovl_plot_sweep(self):
        plot = os.path.join(ROOT, "tools", "ovl-plot")
        if subprocess.run([sys.executable, plot, "check"], capture_output=True).returncode != 0:
            self.skipTest("matplotlib is not available")
        data = write("sweep.jsonl", "%s\n%s\n" % (OLD_GEMM, NEW_GEMM))
        png = scratch("sweep.png")
        p = subprocess.run([sys.executable, plot, "sweep", data, "--x", "ndup", "--y", "gflops_median", "-o", png],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertGreater(os.path.getsize(png), 1000)
        # relerr: -1 (old) and null (new) are both "not measured": no point to plot
        p = subprocess.run([sys.executable, plot, "sweep", data, "--x", "ndup", "--y", "relerr", "-o", png],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("no line has both", p.stderr)


    def test_plot_smpi(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("matplotlib is not available")
        bld, out = tempfile.mkdtemp(dir=SCRATCH), tempfile.mkdtemp(dir=SCRATCH)
        os.makedirs(os.path.join(bld, "repro"))
        with open(os.path.join(bld, "repro", "table1_ideal.csv"), "w") as f:
            f.write("system,n,ndup,tflops,paper\nA,100,1,1.0,1.1\nA,100,2,1.5,1.6\n")
        p = subprocess.run([sys.executable, os.path.join(ROOT, "smpi", "plot_smpi.py"), bld, out], capture_output=True,
                           text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(os.listdir(out), ["smpi_table2.png"])

if __name__ == "__main__":
    SCRATCH = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else tempfile.mkdtemp()
    os.makedirs(SCRATCH, exist_ok=True)
    unittest.main(verbosity=1)
