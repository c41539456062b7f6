"""``python -m validation.explore``: a classroom page, one self-contained HTML file that opens from disk.

    python -m validation.explore --model res1 --out res1.html
    python -m validation.explore --model res2-ode --out ode.html
    python -m validation.explore --model docs/examples/damped_res1_ode.py:DampedRes1ODE --out own.html

The page shows one draw of the weights (one Brownian path, or one set of smooth weights): the hidden-state
trajectory h_k of the ResNet at a depth L chosen with a slider (powers of two), the limit's path H_t (SDE or ODE) on
the same draw, and the error ‖h_L − H_1‖ at the final time; beside it, the strong error over L (root mean square over
``--samples`` draws, the convergence study's numbers) with its fitted rate, building up as L moves. A second view
moves the scaling β of i.i.d. weights (α_L = L^-β) and shows the three regimes of Marion et al.'s Fig. 1: explosion
(β < ½), a non-trivial limit (β = ½) and the identity (β > ½).

Every number is computed by the package when the page is written; the page only draws them. The charts are plain
SVG drawn by about a hundred lines of JavaScript in the page: no plotting library, so the file stays small (about
0.1–0.5 MB, against 3.6 MB for Plotly's bundle alone), opens from ``file://`` with no network, and shows the same in
any browser.

Python: ``validation.explore.build("res1")`` returns the page's data; ``write_page(data, path)`` writes the file.

Exit status: 0 the page is written, 2 bad input (one line), 3 internal error.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path
from typing import Any, Sequence

import torch

from validation.core import cli
from validation.core.results import plan_outputs, write_text
from validation.core.runtime import memory_limits_mb
from validation.core.settings import UsageError

__all__ = ["build", "write_page", "main", "DEPTHS", "BETAS"]

#: the slider's depths
DEPTHS = (2, 4, 8, 16, 32, 64, 128, 256)
#: the β slider of the regimes view (i.i.d. weights, α_L = L^-β)
BETAS = tuple(round(0.2 + 0.05 * i, 2) for i in range(17))          # 0.2 … 1.0
#: depths of the regimes view
REGIME_DEPTHS = (10, 30, 100, 300, 1000)
#: the memory of one chunk of the regimes view's networks, in MiB (measure_ratios's own default): the page's peak
#: (measured: 730 MiB for the regimes view alone, 270 for the strong errors, 5–6 s in all on 2 cores)
REGIME_CHUNK_MB = 512.0


def _pair(model: str, width: int, seed: int):
    from limits import ModelConfig

    from .core.pair_study import pair_class

    return pair_class(model)(ModelConfig(width=width), samples=1, seed=seed)



#: a pair's one-line description as the command line prints it (ASCII), and as a class reads it on the page
_GREEK = {"sigma": "σ", "phi": "φ", "psi": "ψ", "alpha": "α", "beta": "β", "nu": "ν"}
_SUBSCRIPT = str.maketrans("tk", "ₜₖ")


def formula_text(description: str) -> str:
    """A pair's description with its formulas in Unicode for the page's header: "(s/sqrt d) dB sigma(H)" reads
    "(s/√d) dB σ(H)", "<->" "↔", "V_t" "Vₜ", "L^-1/2" "L^(−1/2)", "1/2 sigma''(0)" "½ σ''(0)", "Ito" "Itô" (issue 66:
    the header was source-code text). Words are matched whole, so "sigmoid" stays as it is."""
    text = description.replace("<->", "↔").replace("sqrt ", "√")
    text = re.sub(r"\^-([\w/]+)", lambda m: "^(−" + m.group(1) + ")", text)
    text = re.sub(r"\b(" + "|".join(_GREEK) + r")\b", lambda m: _GREEK[m.group(1)], text)
    text = re.sub(r"\b([A-Za-z])_([tk])\b", lambda m: m.group(1) + m.group(2).translate(_SUBSCRIPT), text)
    text = re.sub(r"(?<![\w^(−/])1/2(?![\w/])", "½", text)
    return re.sub(r"\bIto\b", "Itô", text)


def _paths(model: str, width: int, seed: int, depths: Sequence[int]) -> dict[str, Any]:
    """One draw: the network's states at every depth and the limit's path on the same draw (first coordinates)."""
    from limits import BrownianGrid, SDEPair, run_network

    pair = _pair(model, width, seed)
    fine = 16 * max(depths)
    times = torch.linspace(0, 1, 257, dtype=torch.float64)
    h0 = pair.initial_state()
    if isinstance(pair, SDEPair):
        import torchsde

        path = BrownianGrid(samples=1, size=pair.noise_dim, steps=fine, seed=seed)
        limit = torchsde.sdeint(pair.limit_sde(), h0, times, bm=path, dt=1 / fine, method="euler")
        states = {L: run_network(pair, L, path, states=True) for L in depths}
        how = f"the SDE on the same Brownian path (Euler–Maruyama with {fine} steps)"
    else:
        limit = pair.solve_limit(h0, times, rtol=1e-10, atol=1e-12)
        states = {L: run_network(pair, L, states=True) for L in depths}
        how = "the ODE on the same weights (dopri5, rtol 1e-10)"
    coordinates = min(pair.width, 4)
    return {"description": formula_text(pair.description), "kind": pair.kind, "limit_how": how, "coordinates": coordinates,
            "times": times.tolist(), "limit": limit[:, 0, :coordinates].T.tolist(),
            "networks": {str(L): states[L][:, 0, :coordinates].T.tolist() for L in depths},
            "final_error": {str(L): float((states[L][-1, 0] - limit[-1, 0]).norm()) for L in depths}}


def _strong_errors(model: str, width: int, seed: int, samples: int, depths: Sequence[int]) -> dict[str, Any]:
    """The convergence study's RMS error per depth over ``samples`` draws, with its fitted rate and verdict."""
    from validation import convergence

    result = convergence.run(model, samples=samples, depths=tuple(depths), width=width, seed=seed)
    final_sq = torch.as_tensor(result.errors.final_sq, dtype=torch.float64)          # samples × depths
    rms = final_sq.mean(0).sqrt()
    spread = final_sq.std(0) / (2 * rms * math.sqrt(final_sq.shape[0]))             # delta method, for the bars
    low, high = result.rate_ci
    return {"depths": list(depths), "rms": rms.tolist(), "half_width": (1.96 * spread).tolist(), "rate": result.rate,
            "rate_ci": [low, high], "theory_rate": result.theory_rate, "verdict": result.verdict,
            "verdict_detail": result.check.detail, "verdict_words": _in_words(model, result, samples),
            "samples": samples}


def _in_words(model: str, result: Any, samples: int) -> str:
    """The verdict as a class reads it: what the fitted rate says against the theory's, and, when it does not settle,
    why and what the full study runs instead."""
    from validation import convergence
    from validation.core.pair_study import pair_class, resolve_settings

    theory, tolerance = result.theory_rate, result.settings.tolerance
    low, high = result.rate_ci
    full = resolve_settings(pair_class(model), convergence.ConvergenceSettings())
    if result.verdict == "PASS":
        return (f"the fitted rate {result.rate:.2f} agrees with the theory's {theory:g}: its 95% interval "
                f"[{low:.2f}, {high:.2f}] lies within {theory:g} ± {tolerance:g}.")
    if result.verdict == "FAIL":
        return (f"the fitted rate {result.rate:.2f} disagrees with the theory's {theory:g}: its 95% interval "
                f"[{low:.2f}, {high:.2f}] lies outside {theory:g} ± {tolerance:g}.")
    return (f"{samples} draws are not enough to tell the fitted {result.rate:.2f} from the theory's {theory:g}: its 95% "
            f"interval [{low:.2f}, {high:.2f}] reaches past {theory:g} ± {tolerance:g}. The full study, python -m "
            f"validation.convergence --model {model}, uses {full.samples} draws at width {full.width}.")


def _regimes(seed: int, networks: int) -> dict[str, Any]:
    """Marion et al. Fig. 1: the median of ‖h_L − h_0‖/‖h_0‖ over networks, res-3 with i.i.d. weights, per β and L."""
    from limits.initialisation import IIDRegime, measure_ratios

    ratios = [measure_ratios(IIDRegime(), L, list(BETAS), networks, seed=seed, backward=False,
                             memory_mb=REGIME_CHUNK_MB).r_h for L in REGIME_DEPTHS]
    medians = torch.stack([r.flatten(1).median(dim=1).values for r in ratios], dim=1)     # betas × depths
    return {"betas": list(BETAS), "depths": list(REGIME_DEPTHS), "median_ratio": medians.tolist(),
            "networks": networks}


def estimate(model: str = "res1", *, width: int = 4, seed: int = 0, samples: int = 200,
             depths: Sequence[int] = DEPTHS) -> tuple[float, float]:
    """The page's peak memory in MiB and its time in seconds, estimated before anything is computed: the convergence
    study's run behind the strong-error curve (its own estimates, :func:`validation.core.pair_study.estimate_mb` and
    ``estimate_seconds``: the largest part; its memory does not grow with ``samples``) and one draw's paths at every
    depth on the fine grid (16 × the deepest depth, ``width`` coordinates, a few copies)."""
    from validation import convergence

    from validation.core.workers import run_memory_mb

    settings = convergence.ConvergenceSettings(samples=samples, depths=tuple(depths), width=width, seed=seed)
    paths = 8 * 4 * width * (16 * max(depths) + sum(depths)) / 2**20
    regimes = run_memory_mb(REGIME_CHUNK_MB)     # the regimes view: measure_ratios's chunks of networks
    return (float(max(convergence.COMMAND.estimate_mb(model, settings), regimes) + paths),
            float(convergence.COMMAND.estimate_seconds(model, settings)))


def build(model: str = "res1", *, width: int = 4, seed: int = 0, samples: int = 200,
          depths: Sequence[int] = DEPTHS, regime_networks: int = 40) -> dict[str, Any]:
    """The page's data: one draw's paths at every depth, the strong errors and the regimes view (module docstring)."""
    depths = tuple(int(L) for L in depths)
    if len(depths) < 3 or any(b <= a for a, b in zip(depths, depths[1:])) or depths[0] < 1 or depths[-1] > 4096:
        raise ValueError(f"depths {list(depths)}: give at least 3 increasing depths from 1 to 4096")
    if not 1 <= width <= 64:
        raise ValueError(f"width {width} is out of range (1 … 64)")
    if not 10 <= samples <= 100_000:
        raise ValueError(f"samples {samples} is out of range (10 … 100000)")
    return {"model": model, "width": width, "seed": seed, "paths": _paths(model, width, seed, depths),
            "errors": _strong_errors(model, width, seed, samples, depths), "regimes": _regimes(seed, regime_networks)}


def _not_finite(value: Any, where: str = "") -> list[str]:
    """The places in the page's data (``errors.rms``, ``paths.networks.16``, …) that hold NaN or ±inf."""
    if isinstance(value, float):
        return [] if math.isfinite(value) else [where]
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    else:
        return []
    found: list[str] = []
    for key, item in items:
        for place in _not_finite(item, f"{where}.{key}" if where and isinstance(key, str) else where or str(key)):
            if place not in found:
                found.append(place)
    return found


def write_page(data: dict[str, Any], path: str | Path) -> Path:
    """Write the self-contained page (whole or not at all: a temporary file renamed into place). Raises ``ValueError``
    naming where the data hold NaN or ±inf (a model that diverged): the page could not draw them, and JSON has no form
    for them."""
    bad = list(dict.fromkeys(".".join(place.split(".")[:2]) for place in _not_finite(data)))  # paths.networks, …
    if bad:
        raise ValueError(f"the model {data.get('model')} gave numbers that are not finite (NaN or ±inf) in "
                         f"{', '.join(bad[:6])}{' …' if len(bad) > 6 else ''}: the page cannot draw them (python -m "
                         "validation.convergence --model … shows its errors per depth)")
    page = _TEMPLATE.replace("__DATA__", json.dumps(data, allow_nan=False, separators=(",", ":")))
    return write_text(path, page)


def main(argv: Sequence[str] | None = None) -> int:
    cli.printable_output()  # before any printing, the help included: an ASCII-only stdout writes escapes
    parser = argparse.ArgumentParser(prog="python -m validation.explore", description=__doc__.split("\n\n")[2],
                                     epilog="Exit status: 0 the page is written, 2 bad input, 3 internal error.")
    parser.add_argument("--model", default="res1", help="a pair (python -m validation.convergence --list), or "
                                                        "FILE.py:Class for your own (default: res1)")
    parser.add_argument("--out", default="explorer.html", help="the HTML file to write (default: explorer.html)")
    parser.add_argument("--width", type=int, default=4, help="width d of the network (default: 4)")
    parser.add_argument("--samples", type=int, default=200, help="draws behind the strong-error curve (default: 200)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every draw (default: 0)")
    args = parser.parse_args(argv)
    try:  # the path is checked before the minutes of computing (the checks of the studies' --json, --plot)
        if args.out == "":
            raise UsageError("--out '': give a file name")
        out = plan_outputs({"out": args.out}).paths["out"]
        if not 1 <= args.width <= 64 or not 10 <= args.samples <= 100_000:
            raise UsageError(f"width {args.width} (1 … 64) or samples {args.samples} (10 … 100000) is out of range")
        (needed, seconds), available = (estimate(args.model, width=args.width, seed=args.seed, samples=args.samples),
                                        min(memory_limits_mb().values()))
        if needed > available:
            raise UsageError(f"this page needs about {needed:,.0f} MiB of memory, more than the {available:,.0f} MiB "
                             "available here; lower --samples or --width")
        if seconds > cli.LONG_RUN_SECONDS:
            print(f"warning: this page's strong-error curve is estimated to take about {seconds / 60:.0f} minutes on "
                  "a 2-core machine (Ctrl-C stops it cleanly, writing nothing)", file=sys.stderr)
    except (UsageError, ValueError, KeyError) as exc:   # a bad path, size or model: one line, before any computing
        print(f"error: {cli.one_line(str(exc))}", file=sys.stderr)
        return 2
    try:
        data = build(args.model, width=args.width, seed=args.seed, samples=args.samples)
        written = write_page(data, out)
    except (ValueError, KeyError) as exc:
        print(f"error: {cli.one_line(str(exc))}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # a user's model exiting mid-run: never a status of its own choosing
        print(f"internal error: {cli.forged_exit(exc)}", file=sys.stderr)
        return 3
    except Exception as exc:  # noqa: BLE001 (one line, exit 3: never a traceback)
        print(f"internal error: {cli.one_line(f'{type(exc).__name__}: {exc}')}", file=sys.stderr)
        return 3
    print(f"wrote {written} ({written.stat().st_size / 1e6:.2f} MB): open it in a browser, no server needed")
    return 0


_TEMPLATE = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ResNet and its limit — explorer</title>
<style>
body{font-family:system-ui,sans-serif;max-width:1150px;margin:1em auto;padding:0 1em;color:#222}
h1{font-size:1.4em} .row{display:flex;flex-wrap:wrap;gap:1.5em} .panel{flex:1 1 520px}
svg{background:#fff;border:1px solid #ddd} .note{color:#555;font-size:.92em} label{font-weight:600}
.big{font-size:1.15em} input[type=range]{width:320px;vertical-align:middle}
</style></head><body>
<h1>A deep ResNet and its continuous-depth limit, on one draw of the weights</h1>
<p class="note" id="about"></p>
<p><label for="depth">depth L</label> <input id="depth" type="range" min="0" max="0" step="1" value="0">
<span class="big" id="depthText"></span> &nbsp; <label for="coord">coordinate</label> <select id="coord"></select></p>
<div class="row"><div class="panel"><svg id="paths" width="540" height="340"></svg>
<p class="big" id="errorText"></p></div>
<div class="panel"><svg id="rates" width="540" height="340"></svg><p class="note" id="rateText"></p></div></div>
<h2>Three regimes of i.i.d. weights (Marion et al., Fig. 1)</h2>
<p><label for="beta">scaling β (α<sub>L</sub> = L<sup>−β</sup>)</label> <input id="beta" type="range" min="0" max="0"
step="1" value="0"> <span class="big" id="betaText"></span></p>
<div class="row"><div class="panel"><svg id="regimes" width="540" height="320"></svg></div>
<div class="panel"><p class="note" id="regimeText"></p></div></div>
<script>
const DATA = __DATA__;
const NS = "http://www.w3.org/2000/svg";
function el(svg, tag, attrs, text){const e=document.createElementNS(NS,tag);for(const k in attrs)e.setAttribute(k,attrs[k]);
 if(text!==undefined)e.textContent=text;svg.appendChild(e);return e;}
function chart(svg, series, opts){
 // axes with a handful of ticks, the legend in the top margin (never over the data), every label inside the svg
 while(svg.firstChild)svg.removeChild(svg.firstChild);
 const labelled=series.filter(s=>s.label), rows=Math.ceil(labelled.length/2);
 const W=+svg.getAttribute("width"),H=+svg.getAttribute("height"),m={l:62,r:16,t:30+15*rows,b:44};
 const tx=v=>opts.logx?Math.log10(v):v, ty=v=>opts.logy?Math.log10(v):v;
 let xs=[],ys=[];series.forEach(s=>{s.x.forEach(v=>xs.push(tx(v)));s.y.forEach(v=>{if(isFinite(ty(v)))ys.push(ty(v));});});
 if(opts.ylim){ys.push(ty(opts.ylim[0]),ty(opts.ylim[1]));}
 let x0=Math.min(...xs),x1=Math.max(...xs),y0=Math.min(...ys),y1=Math.max(...ys);
 if(y1-y0<1e-12){y0-=1;y1+=1;} const py=(y1-y0)*0.06; y0-=py; y1+=py;
 const X=v=>m.l+(tx(v)-x0)/(x1-x0)*(W-m.l-m.r), Y=v=>H-m.b-(ty(v)-y0)/(y1-y0)*(H-m.t-m.b);
 el(svg,"text",{x:W/2,y:17,"text-anchor":"middle","font-size":13,"font-weight":600},opts.title);
 el(svg,"line",{x1:m.l,y1:H-m.b,x2:W-m.r,y2:H-m.b,stroke:"#444"});el(svg,"line",{x1:m.l,y1:m.t,x2:m.l,y2:H-m.b,stroke:"#444"});
 const ticks=(a,b,log)=>{const out=[];if(log){for(let e=Math.ceil(a);e<=Math.floor(b);e++)out.push(Math.pow(10,e));
   if(out.length<2){out.length=0;for(let j=0;j<=3;j++)out.push(+Math.pow(10,a+(b-a)*(0.05+0.3*j)).toPrecision(2));}}
  else{const raw=(b-a)/5,p=Math.pow(10,Math.floor(Math.log10(raw||1)));const step=[1,2,2.5,5,10].find(f=>f*p>=raw)*p;
   for(let v=Math.ceil(a/step)*step;v<=b+1e-12;v+=step)out.push(+v.toPrecision(6));}
  return out;};
 const xt=opts.xticks||ticks(x0,x1,opts.logx), every=Math.ceil(xt.length/7);
 xt.forEach((v,j)=>{const x=X(v);el(svg,"line",{x1:x,y1:H-m.b,x2:x,y2:H-m.b+4,stroke:"#444"});
  if(j%every===0)el(svg,"text",{x:x,y:H-m.b+16,"text-anchor":x>W-m.r-14?"end":"middle","font-size":11,"class":"tick"},String(v));});
 ticks(y0,y1,opts.logy).forEach(v=>{const y=Y(v);el(svg,"line",{x1:m.l-4,y1:y,x2:m.l,y2:y,stroke:"#444"});
  el(svg,"text",{x:m.l-6,y:y+4,"text-anchor":"end","font-size":11,"class":"tick"},opts.logy?v.toExponential(1):String(v));});
 el(svg,"text",{x:(W+m.l)/2,y:H-8,"text-anchor":"middle","font-size":12},opts.xlabel);
 el(svg,"text",{x:14,y:(H-m.b+m.t)/2,"text-anchor":"middle","font-size":12,transform:`rotate(-90 14 ${(H-m.b+m.t)/2})`},opts.ylabel);
 series.forEach((s,i)=>{const pts=s.x.map((v,j)=>[X(v),Y(s.y[j])]).filter(p=>isFinite(p[1]));
  if(s.line!==false)el(svg,"polyline",{points:pts.map(p=>p.join(",")).join(" "),fill:"none",stroke:s.color,"stroke-width":s.width||1.6,
   "stroke-dasharray":s.dash||"","class":"series-"+(s.name||i)});
  if(s.markers)pts.forEach(p=>el(svg,"circle",{cx:p[0],cy:p[1],r:s.markers,fill:s.color}));});
 labelled.forEach((s,i)=>{const x=m.l+(i%2)*(W-m.l-m.r)/2, y=30+15*Math.floor(i/2);
  el(svg,"line",{x1:x,y1:y-4,x2:x+18,y2:y-4,stroke:s.color,"stroke-width":2,"stroke-dasharray":s.dash||""});
  el(svg,"text",{x:x+23,y:y,"text-anchor":"start","font-size":11,fill:s.color,"class":"legend"},s.label);});
 svg.dataset.plot=[m.l,m.t,W-m.r,H-m.b].join(",");
}
const P=DATA.paths, E=DATA.errors, R=DATA.regimes, depths=Object.keys(P.networks).map(Number);
document.getElementById("about").textContent=`Model ${DATA.model} (width d = ${DATA.width}, seed ${DATA.seed}): ${P.description} Black: ${P.limit_how}. Coloured: the ResNet of depth L, layer k at depth time t = k/L, read from the same draw.`;
const slider=document.getElementById("depth"), coord=document.getElementById("coord");
slider.max=depths.length-1; slider.value=Math.min(2,depths.length-1);
for(let c=0;c<P.coordinates;c++){const o=document.createElement("option");o.value=c;o.textContent=String(c+1);coord.appendChild(o);}
function draw(){
 const L=depths[+slider.value], c=+coord.value, h=P.networks[String(L)][c];
 document.getElementById("depthText").textContent=`L = ${L}`;
 chart(document.getElementById("paths"),[{x:P.times,y:P.limit[c],color:"#000",label:"limit H_t",name:"limit"},
  {x:h.map((_,k)=>k/L),y:h,color:"#d62728",markers:L<=64?3:0,label:`network, L = ${L}`,name:"network"}],
  {title:`coordinate ${c+1} of the hidden state`,xlabel:"depth time t",ylabel:`h_k (coordinate ${c+1})`});
 document.getElementById("errorText").textContent=`error at the output on this draw: ‖h_L − H_1‖ = ${P.final_error[String(L)].toExponential(3)}`;
 const k=depths.indexOf(L), shown=E.depths.slice(0,k+1), rms=E.rms.slice(0,k+1);
 const guide=E.depths.map(d=>E.rms[0]*Math.pow(d/E.depths[0],-E.theory_rate));
 chart(document.getElementById("rates"),[{x:E.depths,y:guide,color:"#999",dash:"5,4",label:`theory: L^-${E.theory_rate}`,name:"theory"},
  {x:shown,y:rms,color:"#1f77b4",markers:4,label:`RMS error over ${E.samples} draws`,name:"rms"}],
  {title:"strong error at the output against depth",xlabel:"depth L",ylabel:"RMS ‖h_L − H_1‖",logx:true,logy:true,xticks:E.depths,
   ylim:[Math.min(...E.rms)*0.8,Math.max(...E.rms)*1.25]});
 document.getElementById("rateText").textContent=`fitted rate over all depths: ${E.rate.toFixed(3)} [${E.rate_ci[0].toFixed(3)}, ${E.rate_ci[1].toFixed(3)}] (95%), theory ${E.theory_rate}; the convergence study's verdict on these ${E.samples} draws at width ${DATA.width}: ${E.verdict}. In words: ${E.verdict_words} One draw's error (left) is noisy from depth to depth; the RMS over the draws is what converges.`;
}
const beta=document.getElementById("beta"); beta.max=R.betas.length-1; beta.value=R.betas.indexOf(0.5);
function drawRegime(){
 const i=+beta.value, b=R.betas[i], y=R.median_ratio[i];
 document.getElementById("betaText").textContent=`β = ${b.toFixed(2)}`;
 const growth=Math.log(y[y.length-1]/y[0])/Math.log(R.depths[R.depths.length-1]/R.depths[0]);
 const verdict=b<0.475?"explosion: the ratio grows with L":(b>0.525?"identity: the ratio falls to 0 as L grows":"a non-trivial limit: the ratio settles");
 chart(document.getElementById("regimes"),[{x:R.depths,y:y,color:"#2ca02c",markers:4,label:`median over ${R.networks} networks`,name:"ratio"}],
  {title:"‖h_L − h_0‖ / ‖h_0‖ (res-3, i.i.d. weights)",xlabel:"depth L",ylabel:"median ratio",logx:true,logy:true,xticks:R.depths,
   ylim:[Math.min(...R.median_ratio.flat())*0.8,Math.max(...R.median_ratio.flat())*1.25]});
 document.getElementById("regimeText").textContent=`β = ${b.toFixed(2)}: ${verdict} (log-slope ${growth.toFixed(2)} between L = ${R.depths[0]} and ${R.depths[R.depths.length-1]}). Marion et al. Fig. 1: β < 1/2 explodes, β = 1/2 has a non-trivial limit, β > 1/2 tends to the identity.`;
}
slider.addEventListener("input",draw); coord.addEventListener("change",draw); beta.addEventListener("input",drawRegime);
draw(); drawRegime();
</script></body></html>
"""


if __name__ == "__main__":
    sys.exit(main())
