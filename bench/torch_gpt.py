#!/usr/bin/env python3
"""The same GPT step as carve's examples/gpt2*.cir, in eager PyTorch float32:
embedding + learned positions, pre-norm blocks (layernorm, attention with
heads as their own dim and a causal mask, residual, layernorm, gelu_tanh MLP,
residual), final layernorm, logits tied to the embedding, cross-entropy, one
Adam step. Prints one JSON line: median step time and peak memory.

  torch_gpt.py --layers 12 --d 768 --heads 12 --mlp 3072 --vocab 50257 --seq 1024 --batch 8 \
               --device cuda --steps 6 [--threads N]

Used by make bench (CPU, when python3-torch is installed) and by
tests/gpu/check_gpu.sh (GPU); never by the build or the tests."""
import argparse, json, statistics, time
import torch

ap = argparse.ArgumentParser()
for k, v in [("layers", 12), ("d", 768), ("heads", 12), ("mlp", 3072), ("vocab", 50257), ("seq", 1024),
             ("batch", 8), ("steps", 6), ("threads", 0)]:
    ap.add_argument("--" + k, type=int, default=v)
ap.add_argument("--device", default="cpu")
ap.add_argument("--lr", type=float, default=1e-4)
ap.add_argument("--tf32", action="store_true")
a = ap.parse_args()
if a.threads:
    torch.set_num_threads(a.threads)
torch.backends.cuda.matmul.allow_tf32 = a.tf32      # full fp32 unless --tf32, as carve
dev = torch.device(a.device)
torch.manual_seed(0)
hk = a.d // a.heads

def p(*shape, std=0.02, fill=None):
    t = torch.empty(*shape, device=dev)
    if fill is None:
        t.normal_(0, std)
    else:
        t.fill_(fill)
    return t.requires_grad_()

wte, wpe = p(a.vocab, a.d), p(a.seq, a.d, std=0.01)
layers = []
for _ in range(a.layers):
    layers.append(dict(g1=p(a.d, fill=1.0), b1=p(a.d, fill=0.0), wq=p(a.d, a.heads, hk), wk=p(a.d, a.heads, hk),
                       wv=p(a.d, a.heads, hk), wo=p(a.heads, hk, a.d), bo=p(a.d, fill=0.0),
                       g2=p(a.d, fill=1.0), b2=p(a.d, fill=0.0), w1=p(a.d, a.mlp), c1=p(a.mlp, fill=0.0),
                       w2=p(a.mlp, a.d), c2=p(a.d, fill=0.0)))
gf, bf = p(a.d, fill=1.0), p(a.d, fill=0.0)
params = [wte, wpe, gf, bf] + [t for l in layers for t in l.values()]
ids = torch.randint(0, a.vocab, (a.batch, a.seq), device=dev)
labels = torch.randint(0, a.vocab, (a.batch, a.seq), device=dev)
mask = torch.triu(torch.ones(a.seq, a.seq, dtype=torch.bool, device=dev), diagonal=1)
ln = torch.nn.functional.layer_norm

def step_loss():
    x = wte[ids] + wpe
    for l in layers:
        h = ln(x, (a.d,), l["g1"], l["b1"], 1e-5)
        q = torch.einsum("bsd,dhk->bhsk", h, l["wq"])
        k = torch.einsum("bsd,dhk->bhsk", h, l["wk"])
        v = torch.einsum("bsd,dhk->bhsk", h, l["wv"])
        s = torch.einsum("bhqk,bhtk->bhqt", q, k) * (1.0 / hk ** 0.5)
        s = s.masked_fill(mask, float("-inf")).softmax(-1)
        c = torch.einsum("bhqt,bhtk->bhqk", s, v)
        x = x + torch.einsum("bhqk,hkd->bqd", c, l["wo"]) + l["bo"]
        m = ln(x, (a.d,), l["g2"], l["b2"], 1e-5)
        x = x + torch.nn.functional.gelu(m @ l["w1"] + l["c1"], approximate="tanh") @ l["w2"] + l["c2"]
    logits = torch.einsum("bsd,vd->bsv", ln(x, (a.d,), gf, bf, 1e-5), wte)
    return torch.nn.functional.cross_entropy(logits.reshape(-1, a.vocab), labels.reshape(-1))

opt = torch.optim.Adam(params, lr=a.lr)
sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
if dev.type == "cuda":
    torch.cuda.reset_peak_memory_stats()
times, losses = [], []
for i in range(a.steps):
    sync()
    t0 = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    loss = step_loss()
    loss.backward()
    opt.step()
    sync()
    times.append(time.perf_counter() - t0)
    losses.append(loss.item())
peak = torch.cuda.max_memory_allocated() if dev.type == "cuda" else None
if peak is None:
    try:
        import resource
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    except Exception:
        peak = 0
print(json.dumps({"step_time": statistics.median(times[1:] if len(times) > 1 else times), "peak_memory": peak,
                  "losses": losses, "device": torch.cuda.get_device_name() if dev.type == "cuda" else "cpu",
                  "torch": torch.__version__}))
