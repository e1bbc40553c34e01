"""A DET curve of the wake word as SVG, from the held-out table wake_cv prints
(threshold, misses clean, misses in kitchen noise, false wakes, per hour).

Standard library only, and byte-for-byte the same output for the same table,
so the committed plot (docs/wake-det-embedding.svg) is checked by rerunning:

    python -m parley_training.det_plot TABLE.txt docs/wake-det-embedding.svg

Axes as DET plots draw them: misses on a normal-deviate (probit) scale,
false wakes per hour on a log scale; points with no false wake sit on the
left edge (drawn at the floor, labelled "0")."""
import argparse
import math
import re
from statistics import NormalDist

ROW = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s+(\d+)\s+([\d.]+)%\s+(\d+)\s+([\d.]+)%\s+(\d+)\s+([\d.]+)\s*$")
HEADER = re.compile(r"held out: (\d+) recordings .*?(\d+) of real speech \(([\d.]+) h\)")


def parse(text):
    """(rows, caption): rows are (threshold, miss clean %, miss kitchen %, false wakes per hour)."""
    rows, caption = [], ""
    for line in text.splitlines():
        if m := HEADER.search(line):
            caption = f"{m.group(1)} recordings held out by voice; {m.group(2)} of real speech ({m.group(3)} h)"
        elif m := ROW.match(line):
            rows.append((float(m.group(1)), float(m.group(3)), float(m.group(5)), float(m.group(7))))
    if not rows:
        raise ValueError("no table rows (threshold, misses clean, misses kitchen, false wakes, per hour) found")
    return rows, caption


class Axes:
    """Maps (false wakes per hour, miss %) to the plot's pixels."""
    def __init__(self, left=70, top=40, width=440, height=300, fw=(0.1, 100.0), miss=(0.5, 50.0)):
        self.left, self.top, self.width, self.height, self.fw, self.miss = left, top, width, height, fw, miss
        self.probit = NormalDist().inv_cdf

    def x(self, per_hour):
        lo, hi = (math.log10(v) for v in self.fw)
        v = math.log10(max(per_hour, self.fw[0]))
        return self.left + (v - lo) / (hi - lo) * self.width

    def y(self, miss_percent):
        lo, hi = (self.probit(v / 100) for v in self.miss)
        v = self.probit(min(max(miss_percent, self.miss[0]), self.miss[1]) / 100)
        return self.top + self.height - (v - lo) / (hi - lo) * self.height


def svg(rows, caption, title="Wake word \u201ccomputer\u201d, speech_embedding head"):
    a = Axes()
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="600" height="420" viewBox="0 0 600 420" '
           f'font-family="sans-serif" font-size="11">',
           '<rect width="600" height="420" fill="white"/>',
           f'<text x="{a.left}" y="20" font-size="13" font-weight="bold">{title}</text>',
           f'<text x="{a.left}" y="34" fill="#555">{caption}</text>']
    for fw in (0.1, 0.3, 1, 3, 10, 30, 100):
        x = a.x(fw)
        out.append(f'<line x1="{x:.1f}" y1="{a.top}" x2="{x:.1f}" y2="{a.top + a.height}" stroke="#ddd"/>')
        label = "0" if fw == a.fw[0] else f"{fw:g}"
        out.append(f'<text x="{x:.1f}" y="{a.top + a.height + 15}" text-anchor="middle">{label}</text>')
    for miss in (0.5, 1, 2, 5, 10, 20, 50):
        y = a.y(miss)
        out.append(f'<line x1="{a.left}" y1="{y:.1f}" x2="{a.left + a.width}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{a.left - 6}" y="{y + 4:.1f}" text-anchor="end">{miss:g}%</text>')
    out.append(f'<rect x="{a.left}" y="{a.top}" width="{a.width}" height="{a.height}" fill="none" stroke="#333"/>')
    out.append(f'<text x="{a.left + a.width / 2}" y="{a.top + a.height + 32}" text-anchor="middle">'
               'false wakes per hour of real speech (log; 0 at the left edge)</text>')
    out.append(f'<text transform="translate(18 {a.top + a.height / 2}) rotate(-90)" text-anchor="middle">'
               'misses (normal deviate scale)</text>')
    for column, colour, name in ((1, "#1f5fa8", "clean"), (2, "#c0392b", "kitchen noise, 10 dB")):
        points = " ".join(f"{a.x(r[3]):.1f},{a.y(r[column]):.1f}" for r in rows)
        out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for r in rows:
            out.append(f'<circle cx="{a.x(r[3]):.1f}" cy="{a.y(r[column]):.1f}" r="2.5" fill="{colour}">'
                       f'<title>threshold {r[0]:g}: {r[column]:g}% missed, {r[3]:g} false wakes/h</title></circle>')
    legend_y = a.top + 14
    for i, (colour, name) in enumerate((("#1f5fa8", "clean"), ("#c0392b", "kitchen noise, 10 dB"))):
        y = legend_y + 16 * i
        out.append(f'<line x1="{a.left + a.width - 150}" y1="{y}" x2="{a.left + a.width - 130}" y2="{y}" '
                   f'stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{a.left + a.width - 124}" y="{y + 4}">{name}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("table", help="wake_cv's printed held-out table")
    ap.add_argument("output", help="the SVG to write")
    a = ap.parse_args()
    rows, caption = parse(open(a.table).read())
    with open(a.output, "w") as f:
        f.write(svg(rows, caption))


if __name__ == "__main__":
    main()
