"""Write labels/<id>.json from the lab_*.py label sources."""
import json, os, importlib.util, glob
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ORDER = ["id","title","page_url","platform","has_notes","notes_start","alt_start","notes_end","alt_end","extended_end",
         "notes_links","optional_links","text_urls","notes_text","notes_chars_approx","feed","doubt"]
def load_all():
    out = []
    for f in sorted(glob.glob(os.path.join(HERE, "lab_*.py"))):
        spec = importlib.util.spec_from_file_location(os.path.basename(f)[:-3], f)
        m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
        out.extend(m.L)
    return out
if __name__ == "__main__":
    labs = load_all()
    os.makedirs(os.path.join(ROOT, "labels"), exist_ok=True)
    for d in labs:
        d = dict(d); d["has_notes"] = True
        d["notes_chars_approx"] = len(d["notes_text"])
        o = {k: d[k] for k in ORDER if k in d}
        for k in d:
            if k not in o: o[k] = d[k]
        with open(os.path.join(ROOT, "labels", d["id"] + ".json"), "w", encoding="utf-8") as fh:
            json.dump(o, fh, ensure_ascii=False, indent=1); fh.write("\n")
    print(len(labs), "labels written")
