#!/usr/bin/env python3
"""carve's mixed precision against PyTorch's autocast, on the CPU.

The model of examples/gpt2_small.cir written in torch (the same parameter
names, initial values and batch, written to safetensors files for carve's
--params and --data), trained N Adam steps four ways: carve in f32 and with
precision = bf16 (every op in bf16, f32 master weights and optimizer state),
torch in f32 and under torch.autocast(device_type="cpu", dtype=bfloat16)
(GEMMs in bf16, the rest as autocast leaves it; f32 master weights). Prints
one JSON line with the four loss trajectories.

  autocast.py CARVE MODEL.cir OUTDIR [--steps N] [--lr LR] [--layers L --heads H --d D --head-dim K
              --ffn M --vocab V --seq S --batch B]   (MODEL's sizes: bench/gen_gpt.sh's; default gpt2_small's)

Used by make bench (section 10) when python3-torch is installed; never by
the build or the tests."""
import argparse, json, os, struct, subprocess, sys
import torch

ap = argparse.ArgumentParser()
ap.add_argument("carve")
ap.add_argument("model")
ap.add_argument("outdir")
ap.add_argument("--steps", type=int, default=8)
ap.add_argument("--lr", type=float, default=1e-3)
for k, v in [("layers", 2), ("d", 64), ("heads", 4), ("head-dim", 16), ("ffn", 256), ("vocab", 256), ("seq", 32), ("batch", 4)]:
    ap.add_argument("--" + k, type=int, default=v)     # examples/gpt2_small.cir's
a = ap.parse_args()
L, D, H, K, M, V, S, B = a.layers, a.d, a.heads, a.head_dim, a.ffn, a.vocab, a.seq, a.batch
torch.manual_seed(1)


def normal(*shape, std=0.02):
    return torch.empty(*shape).normal_(0, std)


params = {"wte": normal(V, D), "wpe": normal(S, D, std=0.01)}
for i in range(L):
    pre = "l%d." % i
    params.update({pre + "ln1.g": torch.ones(D), pre + "ln1.b": torch.zeros(D),
                   pre + "attn.wq": normal(D, H, K), pre + "attn.wk": normal(D, H, K),
                   pre + "attn.wv": normal(D, H, K), pre + "attn.wo": normal(H, K, D),
                   pre + "attn.bo": torch.zeros(D), pre + "ln2.g": torch.ones(D), pre + "ln2.b": torch.zeros(D),
                   pre + "mlp.w1": normal(D, M), pre + "mlp.b1": torch.zeros(M),
                   pre + "mlp.w2": normal(M, D), pre + "mlp.b2": torch.zeros(D)})
params.update({"lnf.g": torch.ones(D), "lnf.b": torch.zeros(D)})
ids = torch.randint(0, V, (B, S), dtype=torch.int32)
labels = torch.randint(0, V, (B, S), dtype=torch.int32)


def write_safetensors(path, tensors):
    """the format: an 8-byte little-endian header length, a JSON header, the bytes"""
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        raw = t.contiguous().numpy().tobytes()
        header[name] = {"dtype": {torch.float32: "F32", torch.int32: "I32"}[t.dtype], "shape": list(t.shape),
                        "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


os.makedirs(a.outdir, exist_ok=True)
pfile, dfile = os.path.join(a.outdir, "params.safetensors"), os.path.join(a.outdir, "data.safetensors")
write_safetensors(pfile, params)
write_safetensors(dfile, {"ids": ids, "labels": labels})


def carve_losses(precision):
    train = "adam(lr = %g%s)" % (a.lr, ", precision = bf16" if precision else "")
    r = subprocess.run([a.carve, "run", a.model, "--train", train, "--params", pfile, "--data", dfile,
                        "--steps", str(a.steps), "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("carve failed: " + r.stderr.strip().splitlines()[0] if r.stderr.strip() else "carve failed")
    return json.loads(r.stdout)["losses"]


def torch_losses(autocast):
    p = {k: v.clone().requires_grad_() for k, v in params.items()}
    opt = torch.optim.Adam(p.values(), lr=a.lr)
    mask = torch.triu(torch.ones(S, S, dtype=torch.bool), diagonal=1)
    ln = torch.nn.functional.layer_norm
    out = []
    for _ in range(a.steps):
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=autocast):
            x = p["wte"][ids.long()] + p["wpe"]
            for i in range(L):
                pre = "l%d." % i
                h = ln(x, (D,), p[pre + "ln1.g"], p[pre + "ln1.b"], 1e-5)
                q = torch.einsum("bsd,dhk->bhsk", h, p[pre + "attn.wq"])
                k = torch.einsum("bsd,dhk->bhsk", h, p[pre + "attn.wk"])
                v = torch.einsum("bsd,dhk->bhsk", h, p[pre + "attn.wv"])
                s = torch.einsum("bhqk,bhtk->bhqt", q, k) * (1.0 / K ** 0.5)
                s = s.masked_fill(mask, float("-inf"))
                c = torch.einsum("bhqt,bhtk->bhqk", torch.softmax(s, -1), v)
                x = x + torch.einsum("bhqk,hkd->bqd", c, p[pre + "attn.wo"]) + p[pre + "attn.bo"]
                m = ln(x, (D,), p[pre + "ln2.g"], p[pre + "ln2.b"], 1e-5)
                hh = torch.nn.functional.gelu(m @ p[pre + "mlp.w1"] + p[pre + "mlp.b1"], approximate="tanh")
                x = x + (hh @ p[pre + "mlp.w2"] + p[pre + "mlp.b2"])
            xf = ln(x, (D,), p["lnf.g"], p["lnf.b"], 1e-5)
            logits = torch.einsum("bsd,vd->bsv", xf, p["wte"])
            loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, V), labels.long().reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out


print(json.dumps({"carve_f32": carve_losses(False), "carve_bf16": carve_losses(True),
                  "torch_f32": torch_losses(False), "torch_bf16": torch_losses(True)}))
