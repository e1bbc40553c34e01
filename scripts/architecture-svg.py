#!/usr/bin/env python3
"""Draws docs/architecture.svg: Parley's modules and the dependencies between them.

    python3 scripts/architecture-svg.py            # writes docs/architecture.svg
    python3 scripts/architecture-svg.py -          # writes it to standard output

Reads the targets of Package.swift through `swift package dump-package` (run from
the package root) and draws, in layers from the C libraries at the bottom to the
executables at the top, one box per module and one arrow per dependency inside
the package ("A -> B": A imports B). Test targets and the test-only C helpers
under Tests/ are left out; packages from outside (GRDB, Yams, swift-log, ...)
get no box or arrow (their names are each box's tooltip). Every box is `<g class="module" data-name="...">` and every arrow
`<g class="dependency" data-from="..." data-to="...">`: ArchitecturePictureTests
compares them with Package.swift, so the picture cannot drift.

Standard library only. A module in no layer below stops the script: put it in
one (a layer only depends on the layers under it).
"""
import json
import os
import subprocess
import sys
import tempfile
from xml.sax.saxutils import escape, quoteattr

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Bottom to top: (layer, its fill, the modules in it). Executables and C
# modules are recognised by their kind; the Swift libraries are named here.
LAYERS = [
    ("C libraries", "#eeeeee", None),
    ("pure Swift model", "#e3f0fb", ["ParleyIntents", "ParleyDevice", "ParleyYAML", "ParleyCore", "ParleyApps",
                                     "ParleyTestKit"]),
    # ParleySocket and ParleySandbox here: ParleyExternal starts handlers through them.
    ("device wrappers", "#e6f5e6", ["ParleyAudio", "ParleyWake", "ParleyDenoise", "ParleySpeech", "ParleyStore",
                                    "ParleyHardware", "ParleyRoom", "ParleySocket", "ParleySandbox", "ParleyExternal"]),
    ("between programs", "#fdf1dc", ["ParleyConfiguration", "ParleyControl", "ParleyWyoming"]),
    ("wiring", "#fbe4e4", ["ParleyDaemon", "ParleyWeb"]),
    ("executables", "#ece4f7", None),
]

# The arrows' colour: that of the layer they leave, darker.
EDGE_COLOURS = ["#777777", "#3d6f99", "#3f8a3f", "#b07a1c", "#b04545", "#6a4c9c"]

BOX_HEIGHT = 30
ROW_GAP = 52
BOX_GAP = 18
LABEL_WIDTH = 150
MARGIN = 16


def package():
    # A scratch folder of its own: a build holding .build does not block it.
    with tempfile.TemporaryDirectory() as scratch:
        output = subprocess.run(["swift", "package", "--scratch-path", scratch, "dump-package"], cwd=ROOT,
                                check=True, capture_output=True, text=True).stdout
    return json.loads(output)


def modules(dump):
    """name -> (kind, [dependencies inside the package], [outside packages])."""
    targets = [t for t in dump["targets"]
               if t["type"] != "test" and not (t.get("path") or "").startswith("Tests/")]
    names = {t["name"] for t in targets}
    result = {}
    for t in targets:
        inside, outside = [], []
        for dependency in t.get("dependencies", []):
            (form, value), = dependency.items()
            if form in ("byName", "target") and value[0] in names:
                inside.append(value[0])
            elif form == "product":
                outside.append(value[1] or value[0])
            else:  # a product named by its name alone ("Yams")
                outside.append(value[0])
        kind = {"system": "c", "executable": "executable"}.get(t["type"], "library")
        if kind == "library" and len(t["name"]) > 1 and t["name"][0] == "C" and t["name"][1].isupper():
            kind = "c"  # a C target (CParleyShims)
        result[t["name"]] = (kind, sorted(set(inside)), sorted(set(outside), key=str.lower))
    return result


def layer_of(name, kind):
    for index, (_, _, members) in enumerate(LAYERS):
        if members is None and ((kind == "c" and index == 0) or (kind == "executable" and index == len(LAYERS) - 1)):
            return index
        if members and name in members:
            return index
    sys.exit(f"architecture-svg.py: module {name} is in no layer; add it to LAYERS in {__file__}")


def rows(graph):
    """Rows bottom to top: each layer in sub-rows, a module above those of its layer it uses."""
    layer = {name: layer_of(name, kind) for name, (kind, _, _) in graph.items()}
    for name, (_, deps, _) in graph.items():
        for dep in deps:
            if layer[dep] > layer[name]:
                sys.exit(f"architecture-svg.py: {name} ({LAYERS[layer[name]][0]}) uses {dep}, "
                         f"a layer above ({LAYERS[layer[dep]][0]}): move one of them in LAYERS")
    depth = {}

    def inner(name):
        if name not in depth:
            below = [inner(d) + 1 for d in graph[name][1] if layer[d] == layer[name]]
            depth[name] = max(below, default=0)
        return depth[name]

    result = []  # (layer index, [names])
    for index in range(len(LAYERS)):
        members = [n for n in graph if layer[n] == index]
        for level in range(max((inner(n) for n in members), default=-1) + 1):
            result.append((index, sorted(n for n in members if depth[n] == level)))
    return result


DEGREE = {}  # name -> most arrows at one edge of its box (set by svg)


def width(name):
    """Room for the name, and for its arrows 8 px apart."""
    return max(86, int(7.4 * len(name)) + 22, 8 * DEGREE.get(name, 0) + 16)


def place(graph, layout):
    """x centre of each module: rows ordered by their dependencies' and users' places."""
    order = [list(names) for _, names in layout]
    users = {n: [m for m, (_, deps, _) in graph.items() if n in deps] for n in graph}

    def centres():
        position = {}
        for names in order:
            x = 0
            for n in names:
                position[n] = x + width(n) / 2
                x += width(n) + BOX_GAP
            for n in names:  # rows centred on one axis
                position[n] -= x / 2
        return position

    for sweep in range(8):
        position = centres()
        rows_in_turn = range(1, len(order)) if sweep % 2 == 0 else range(len(order) - 2, -1, -1)
        for r in rows_in_turn:
            links = (lambda n: graph[n][1]) if sweep % 2 == 0 else (lambda n: users[n])
            def key(n):
                xs = [position[m] for m in links(n)]
                return sum(xs) / len(xs) if xs else position[n]
            order[r].sort(key=key)
    return order, centres()


def svg(graph):
    for name, (_, deps, _) in graph.items():
        DEGREE[name] = max(len(deps), sum(name in other[1] for other in graph.values()))
    layout = rows(graph)
    order, position = place(graph, layout)
    widest = max(sum(width(n) + BOX_GAP for n in names) for names in order)
    total_width = LABEL_WIDTH + widest + 2 * MARGIN
    axis = LABEL_WIDTH + MARGIN + widest / 2
    total_height = 2 * MARGIN + len(order) * (BOX_HEIGHT + ROW_GAP) - ROW_GAP + 12
    y_of = {}
    for r, names in enumerate(order):
        y = total_height - MARGIN - 12 - BOX_HEIGHT - r * (BOX_HEIGHT + ROW_GAP)
        for n in names:
            y_of[n] = y
    x_of = {n: axis + position[n] for n in graph}

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {total_width:.0f} {total_height:.0f}" '
           f'width="{total_width:.0f}" height="{total_height:.0f}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">',
           '<!-- Generated by scripts/architecture-svg.py from Package.swift; do not edit by hand. -->',
           '<defs><marker id="head" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" orient="auto">'
           '<path d="M0,0 L8,4 L0,8 z" fill="context-stroke"/></marker></defs>',
           f'<rect width="{total_width:.0f}" height="{total_height:.0f}" fill="#ffffff"/>']
    # Layer bands, behind everything.
    for index, (name, fill, _) in enumerate(LAYERS):
        ys = [y_of[n] for (layer, names) in layout if layer == index for n in names]
        if not ys:
            continue
        top, bottom = min(ys) - ROW_GAP / 2 + 6, max(ys) + BOX_HEIGHT + ROW_GAP / 2 - 6
        out.append(f'<g class="layer" data-name={quoteattr(name)}>'
                   f'<rect x="{MARGIN}" y="{top:.0f}" width="{total_width - 2 * MARGIN:.0f}" height="{bottom - top:.0f}" '
                   f'rx="8" fill="{fill}"/>'
                   f'<text x="{MARGIN + 10}" y="{(top + bottom) / 2 + 5:.0f}" font-size="14" font-weight="bold" '
                   f'fill="#444">{escape(name)}</text></g>')
    # Arrows, from the bottom of the user to the top of the module it uses,
    # in the user's layer's colour; each box's arrows leave and arrive spread
    # along its edge in the order of the boxes at their other ends.
    edges = [(name, dep) for name in sorted(graph) for dep in graph[name][1]]

    def ports(end, other):
        spread = {}
        for name in graph:
            mine = sorted((e for e in edges if e[end] == name), key=lambda e: (x_of[e[other]], e[other]))
            usable = width(name) - 16
            for i, e in enumerate(mine):
                spread[e] = x_of[name] - usable / 2 + usable * (i + 1) / (len(mine) + 1)
        return spread

    leave, arrive = ports(0, 1), ports(1, 0)
    for name, dep in edges:
        x1, y1 = leave[(name, dep)], y_of[name] + BOX_HEIGHT
        x2, y2 = arrive[(name, dep)], y_of[dep]
        bend = (y2 - y1) / 2
        colour = EDGE_COLOURS[layer_of(name, graph[name][0])]
        out.append(f'<g class="dependency" data-from="{name}" data-to="{dep}">'
                   f'<path d="M{x1:.1f},{y1:.1f} C{x1:.1f},{y1 + bend:.1f} {x2:.1f},{y2 - bend:.1f} {x2:.1f},{y2 - 1:.1f}" '
                   f'fill="none" stroke="{colour}" stroke-opacity="0.55" stroke-width="1.1" marker-end="url(#head)"/></g>')
    # Boxes on top.
    for name in sorted(graph):
        kind, _, outside = graph[name]
        w, x, y = width(name), x_of[name], y_of[name]
        stroke = {"c": "#7a7a7a", "executable": "#6a4c9c", "library": "#3d6f99"}[kind]
        out.append(f'<g class="module" data-name="{name}" data-kind="{kind}">'
                   f'<rect x="{x - w / 2:.1f}" y="{y}" width="{w}" height="{BOX_HEIGHT}" rx="5" fill="#ffffff" '
                   f'stroke="{stroke}" stroke-width="1.5"/>'
                   f'<text x="{x:.1f}" y="{y + 20}" font-size="13" text-anchor="middle" fill="#1d1d1d">{escape(name)}</text>')
        if outside:  # shown on hovering, not drawn
            out.append(f'<title>{escape(name)}, also using {escape(", ".join(outside))}</title>')
        out.append('</g>')
    out.append('</svg>')
    return "\n".join(out) + "\n"


def main():
    picture = svg(modules(package()))
    if sys.argv[1:] == ["-"]:
        sys.stdout.write(picture)
    else:
        with open(os.path.join(ROOT, "docs", "architecture.svg"), "w") as f:
            f.write(picture)


if __name__ == "__main__":
    main()
