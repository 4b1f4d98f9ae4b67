"""numpy references of corpus kernels, in float64 (integers in int64), written from each kernel's
documented semantics (what it computes, not how). A reference takes the inputs (dict name -> array,
as generated before the run) and the spec's scalars and constexprs (dict), and returns the expected
value of each buffer the kernel writes. Keyed by kernel name, or by "file:kernel" where two
packages share a name."""
import math

import numpy as np


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def silu(x):
    return x * sigmoid(x)


def gelu_tanh(a):
    return 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a**3)))


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def geglu_tanh_forward(i, c):
    return {"c": gelu_tanh(i["a"]) * i["b"]}


def geglu_tanh_backward(i, c):
    a, b, dc = i["a"], i["b"], i["dc"]
    t = np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a**3))
    da = dc * b * (0.5 * (1 + t) + 0.5 * a * (1 - t * t) * math.sqrt(2 / math.pi) * (1 + 3 * 0.044715 * a * a))
    return {"a": da, "b": dc * gelu_tanh(a)}


def swiglu_forward(i, c):
    return {"c_ptr": silu(i["a_ptr"]) * i["b_ptr"]}


def swiglu_backward(i, c):
    a, b, dc = i["a_ptr"], i["b_ptr"], i["dc_ptr"]
    s = sigmoid(a)
    return {"a_ptr": dc * (a * s * (1 - s) + s) * b, "b_ptr": dc * a * s}


def rms_norm_forward(i, c):  # casting_mode 0 (llama), offset 0
    x, w = i["X_ptr"], i["W_ptr"]
    rstd = 1 / np.sqrt((x * x).mean(1) + c["eps"])
    return {"Y_ptr": x * rstd[:, None] * (c["offset"] + w), "RSTD_ptr": rstd}


def layer_norm_forward(i, c):
    x, w, b = i["X_ptr"], i["W_ptr"], i["B_ptr"]
    mean = x.mean(1)
    rstd = 1 / np.sqrt(((x - mean[:, None]) ** 2).mean(1) + c["eps"])
    return {"Y_ptr": (x - mean[:, None]) * rstd[:, None] * w + b, "Mean_ptr": mean, "RSTD_ptr": rstd}


def cross_entropy(i, c):  # no weights, no smoothing, no softcap, reduction 'mean'
    x, y, n = i["X_ptr"], i["Y_ptr"], c["n_non_ignore"]
    lse = np.log(np.exp(x - x.max(1, keepdims=True)).sum(1)) + x.max(1)
    rows = np.arange(len(y))
    grad = softmax(x)
    grad[rows, y] -= 1
    return {"X_ptr": grad / n, "loss_ptr": (lse - x[rows, y]) / n}


def element_mul(i, c):
    return {"X_ptr": i["X_ptr"] * i["grad_output_ptr"][0]}


def kldiv_forward(i, c):  # log_target False, reduction batchmean: a sum per row
    y, gt = i["y_ptr"], i["gt_ptr"]
    return {"loss_ptr": (gt * (np.log(np.maximum(gt, c["eps"])) - y)).sum(1)}


def embedding_forward(i, c):
    return {"output_ptr": i["embeddings_ptr"][i["indices_ptr"]]}


def fla_sigmoid(i, c):
    return {"y": sigmoid(i["x"])}


def fla_logsigmoid(i, c):
    x = i["x"]
    return {"y": (np.minimum(0, x) - np.log1p(np.exp(-np.abs(x)))) / c["temperature"]}


def fla_softmax_fwd(i, c):
    return {"p": softmax(i["x"])}


def fla_softmax_bwd(i, c):
    p, dp = i["p"], i["dp"]
    return {"ds": p * dp - p * (p * dp).sum(1, keepdims=True)}


def fla_logsumexp(i, c):
    x = i["x"] * c["scale"]
    blocks = [x[:, k:k + c["B"]] for k in range(0, c["D"], c["B"])]
    return {"z": np.stack([np.log(np.exp(b - b.max(1, keepdims=True)).sum(1)) + b.max(1) for b in blocks], 1)}


def fla_l2norm(i, c):
    x = i["x"]
    rstd = 1 / np.sqrt((x * x).sum(1) + c["eps"])
    return {"y": x * rstd[:, None], "rstd": rstd}


def fla_layer_norm_residual(i, c):
    x = i["x"] + i["res"]
    mean = x.mean(1)
    rstd = 1 / np.sqrt(((x - mean[:, None]) ** 2).mean(1) + c["eps"])
    return {"y": (x - mean[:, None]) * rstd[:, None] * i["w"] + i["b"], "res_out": x, "mean": mean, "rstd": rstd}


def fla_position_ids(i, c):
    cu = i["cu_seqlens"]
    return {"y": np.concatenate([np.arange(cu[k + 1] - cu[k]) for k in range(len(cu) - 1)])}


def unsloth_fg(i, c):  # silu(e) rounded to g's fp16 before the product, as the kernel states
    f = silu(i["e"]).astype(np.float16).astype(np.float64)
    return {"h": f * i["g"]}


def unsloth_exact_gelu(i, c):
    e = i["e"]
    f = 0.5 * e * (1 + np.vectorize(math.erf)(e / math.sqrt(2)))
    return {"h": f.astype(np.float16).astype(np.float64) * i["g"]}


def unsloth_rms(i, c, gemma=False):
    x, w = i["X"], i["W"]
    r = 1 / np.sqrt((x * x).mean(1) + c["eps"])
    return {"Y": x * r[:, None] * (w + 1.0 if gemma else w), "r": r}


def unsloth_layernorm(i, c):
    x = i["X"]
    mu = x.mean(1)
    r = 1 / np.sqrt(((x - mu[:, None]) ** 2).mean(1) + c["eps"])
    return {"Y": (x - mu[:, None]) * r[:, None] * i["W"] + i["b"], "r": r, "mu": mu}


def kldiv_backward(i, c):  # log_target True
    return {"new_grads_ptr": -np.exp(i["target_ptr"])}


def embedding_backward(i, c):  # atomic adds onto the gradient already there, repeated indices included
    g = i["grad_weight_ptr"].copy()
    np.add.at(g, i["indices_ptr"], i["grad_output_ptr"])
    return {"grad_weight_ptr": g}


def unsloth_approx_gelu(i, c):
    e = i["e"]
    f = 0.5 * e * (np.tanh(math.sqrt(2 / math.pi) * e * (1 + 0.044715 * e * e)) + 1)
    return {"h": f.astype(np.float16).astype(np.float64) * i["g"]}


def fla_logcumsumexp(i, c):
    s = i["s"]
    m = s.max(1, keepdims=True)
    return {"z": np.log(np.cumsum(np.exp(s - m), 1)) + m}


def fla_token_shift(i, c):  # y[t] = x[t - 1] - x[t], the cache before the first; the last x cached
    x = i["x"]
    prev = np.concatenate([i["cache"][:, None, :], x[:, :-1, :]], 1)
    return {"y": prev - x, "cache_out": x[:, -1, :]}


def selective_log_softmax(i, c):  # rows whose MASK is 0 are skipped: LOG_P keeps what it held
    logits = i["LOGITS"][:, :-1, :] / c["TEMPERATURE"]  # L + 1 rows a batch, the last unread
    lse = np.log(np.exp(logits - logits.max(2, keepdims=True)).sum(2)) + logits.max(2)
    ids = i["INPUT_IDS"]
    picked = np.take_along_axis(logits, ids[:, :, None], 2)[:, :, 0]
    return {"LOG_P": np.where(i["MASK"] != 0, picked - lse, i["LOG_P"])}


def fla_mean_pooling(i, c):  # means of chunks of BT steps (the last chunk shorter)
    x, bt = i["x"], c["BT"]
    return {"o": np.stack([x[:, s:s + bt].mean(1) for s in range(0, x.shape[1], bt)], 1)}


def fla_chunk_cumsum(i, c):  # per chunk of BT steps, a reversed (suffix) sum, times the scale
    s, bt = i["s"], c["BT"]
    o = np.concatenate([np.cumsum(s[:, k:k + bt][:, ::-1], 1)[:, ::-1] for k in range(0, s.shape[1], bt)], 1)
    return {"o": o * c["scale"]}


def fla_swiglu_fwdbwd(i, c):  # gradients of z = silu(x) * y for an upstream g, and z itself
    x, y, g = i["x"], i["y"], i["g"]
    s = sigmoid(x)
    return {"dx": g * s * (1 + x * (1 - s)) * y, "dy": g * x * s, "z": x * s * y}


def group_norm_forward(i, c):  # X [batch, group, hidden]: each group's statistics, then per channel
    x, cpg = i["X_ptr"], c["channels_per_group"]
    m = x.mean(2)
    rstd = 1 / np.sqrt(x.var(2) + c["eps"])
    per = x.shape[2] // cpg
    chan = np.arange(x.shape[1])[:, None] * cpg + np.arange(x.shape[2])[None, :] // per  # [group, hidden]
    y = (x - m[:, :, None]) * rstd[:, :, None] * i["W_ptr"][chan][None] + i["B_ptr"][chan][None]
    return {"Y_ptr": y, "Mean_ptr": m, "RSTD_ptr": rstd}


def f16(x):  # a value rounded to fp16, as the kernel's fp16 stores and casts round
    return np.asarray(x).astype(np.float16).astype(np.float64)


def unsloth_swiglu_backward(i, c):  # in place: DW <- h, e <- df, g <- de, with the kernel's fp16 steps
    dw, e, g = i["DW"], i["e"], i["g"]
    se = sigmoid(e)
    f = f16(se * e)
    dg = f16(dw * g)
    return {"DW": f16(f * g), "e": f16(dw * f), "g": f16(dg * se * (1 + e * (1 - se)))}


def unsloth_exact_gelu_backward(i, c):
    dw, e, g = i["DW"], i["e"], i["g"]
    part = 0.5 * (1 + np.vectorize(math.erf)(e / math.sqrt(2)))
    f = f16(part * e)
    dg = f16(dw * g)
    dfde = part + e * np.exp(-0.5 * e * e) / math.sqrt(2 * math.pi)
    return {"DW": f16(f * g), "e": f16(dw * f), "g": f16(dg * dfde)}


def tv_distance(i, c):  # reduction none: per element; labels in range, none ignored
    p, q = i["p_ptr"], i["q_ptr"]
    return {"loss_ptr": 0.5 * np.abs(p - q), "grads_ptr": np.where(p > q, 0.5, -0.5)}


def layer_norm_backward(i, c):  # from the given mean and rstd; dW, dB summed per program's rows
    x, w, dy = i["X_ptr"], i["W_ptr"], i["DY_ptr"]
    xhat = (x - i["Mean_ptr"][:, None]) * i["RSTD_ptr"][:, None]
    wdy = w * dy
    c1 = (xhat * wdy).mean(1, keepdims=True)
    c2 = wdy.mean(1, keepdims=True)
    per = c["rows_per_program"]
    return {"DX_ptr": (wdy - (xhat * c1 + c2)) * i["RSTD_ptr"][:, None],
            "DW_ptr": (dy * xhat).reshape(-1, per, x.shape[1]).sum(1), "DB_ptr": dy.reshape(-1, per, x.shape[1]).sum(1)}


def unsloth_rms_backward(i, c):  # GEMMA: the weight is (1 + W); dX from the given inverse rms r
    x, dy, r = i["X"], i["dY"], i["r"][:, None]
    dyw = dy * (i["W"] + 1.0)
    normed = x * r
    n = c["n_cols"]
    return {"dX": r / n * (n * dyw - normed * (dyw * normed).sum(1, keepdims=True))}


def unsloth_layernorm_backward(i, c):  # dX written over dY, from the given mean and inverse std
    r, dyw = i["r"][:, None], i["dY"] * i["W"]
    normed = (i["X"] - i["mu"][:, None]) * r
    dx = dyw - dyw.mean(1, keepdims=True) - normed * (dyw * normed).mean(1, keepdims=True)
    return {"dY": dx * r}


def fla_l2norm_backward(i, c):  # from the given y and rstd
    y, r, dy = i["y"], i["rstd"][:, None], i["dy"]
    return {"dx": dy * r - (dy * y).sum(1, keepdims=True) * y * r}


def jsd(i, c):  # generalized JSD of log-probabilities X, Y at 0 < beta < 1, per element, / n_non_ignore
    x, y, b = i["X_ptr"], i["Y_ptr"], c["beta"]
    q, p = np.exp(x), np.exp(y)
    m = b * p + (1 - b) * q
    n = c["n_non_ignore"]
    return {"loss_ptr": (b * p * y + (1 - b) * q * x - m * np.log(m)) / n, "dX_ptr": (1 - b) * q * (x - np.log(m)) / n}


def log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def fla_kl_div(i, c):  # KL(target || softmax(logits)) per row, batchmean; the gradient over the logits
    sl, tl_ = log_softmax(i["logits"]), log_softmax(i["target_logits"])
    n = c["N"]
    return {"loss": (np.exp(tl_) * (tl_ - sl)).sum(1) / n, "logits": (np.exp(sl) - np.exp(tl_)) / n}


def unsloth_cross_entropy_forward(i, c):  # logits scaled, no softcap; labels in range
    x = i["logits_ptr"] * c["LOGIT_SCALE"]
    lse = np.log(np.exp(x - x.max(1, keepdims=True)).sum(1)) + x.max(1)
    y = i["labels_ptr"]
    return {"logsumexp_ptr": lse, "loss_ptr": lse - x[np.arange(len(y)), y]}


def dyt_forward(i, c):  # dynamic tanh: tanh(alpha x) * gamma + beta
    return {"Y": np.tanh(i["Alpha"][0] * i["X"]) * i["Gamma"] + i["Beta"]}


def liger_int8_int2_matmul(i, c):  # B packs four 2-bit weights per byte (w + 1), slice s in bits 2s..2s+1
    a, b = i["a_ptr"].astype(np.int64), i["b_ptr"].astype(np.int64)
    q = a.shape[1] // 4
    return {"c_ptr": sum(a[:, s * q:(s + 1) * q] @ (((b >> (2 * s)) & 3) - 1) for s in range(4))}


def fla_matmul_relu(i, c):  # one batch, no input, no alpha/beta: relu(a @ b), rounded to fp16 once
    return {"c": f16(np.maximum(i["a"] @ i["b"], 0.0))}


def rms_norm_backward(i, c):  # casting_mode 0 (llama), fp32: each program sums dW over its rows
    x, w, dy, rstd = i["X_ptr"], i["W_ptr"] + c["offset"], i["dY_ptr"], i["RSTD_ptr"]
    m = dy * w
    n = x.shape[1]
    dx = rstd[:, None] * m - (rstd**3 / n * (m * x).sum(1))[:, None] * x
    per = c["rows_per_program"]
    dw = (dy * x * rstd[:, None]).reshape(-1, per, n).sum(1)
    return {"dX_ptr": dx, "dW_ptr": dw}


def rotate_half(x, cos, sin):  # x [..., hd]; cos, sin broadcast over [..., hd / 2]
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h], x[..., h:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)


def liger_rope(i, c):  # forward, cos_bs 1: row s of cos/sin (its first hd / 2 entries) rotates position s
    q, k = i["q_ptr"], i["k_ptr"]  # [bs, sl, heads, hd]
    h = c["hd"] // 2
    cos = i["cos"][0, :, :h][None, :, None, :]
    sin = i["sin"][0, :, :h][None, :, None, :]
    return {"q_ptr": rotate_half(q, cos, sin), "k_ptr": rotate_half(k, cos, sin)}


def unsloth_rope(i, c):  # Q [batch, seq, heads, hd] rotated in place by row (position) s of cos/sin
    q = i["Q"]
    h = c["head_dim"] // 2
    cos = i["cos"][:, :h][None, :, None, :]
    sin = i["sin"][:, :h][None, :, None, :]
    return {"Q": rotate_half(q, cos, sin)}


def fla_rotary(i, c):  # not interleaved, R = D / 2, no offsets: y = x rotated by position t
    x = i["x"]  # [B, T, H, D]
    cos = i["cos"][None, :, None, :]
    sin = i["sin"][None, :, None, :]
    return {"y": rotate_half(x, cos, sin)}


def qwen2vl_mrope(i, c):  # column j < hd / 2 takes its cos/sin from section t, h or w by mrope_section
    q, k = i["q_ptr"], i["k_ptr"]  # [bs, sl, heads, hd]
    h = c["hd"] // 2
    t_end, h_end = c["mrope_section_t"], c["mrope_section_t"] + c["mrope_section_h"]
    section = np.array([0 if j < t_end else 1 if j < h_end else 2 for j in range(h)])
    cols = np.arange(h)
    cos = i["cos"][section, :, :, cols].transpose(1, 2, 0)[:, :, None, :]  # [bs, sl, 1, h]
    sin = i["sin"][section, :, :, cols].transpose(1, 2, 0)[:, :, None, :]
    return {"q_ptr": rotate_half(q, cos, sin), "k_ptr": rotate_half(k, cos, sin)}


def group_norm_backward(i, c):  # the given Mean/RSTD per (batch, group); DW and DB accumulate atomically
    x, up, w = i["X_ptr"], i["UPSTREAM_ptr"], i["W_ptr"]  # x [batch, channels, hidden]
    cpg = c["channels_per_group"]
    b, ch, hid = x.shape
    g = ch // cpg
    mean = np.repeat(i["Mean_ptr"], cpg, axis=1)[:, :, None]  # per channel
    rstd = np.repeat(i["RSTD_ptr"], cpg, axis=1)[:, :, None]
    xhat = (x - mean) * rstd
    wdy = w[None, :, None] * up
    n = hid * cpg
    c1 = (xhat * wdy).reshape(b, g, -1).sum(-1) / n
    c2 = wdy.reshape(b, g, -1).sum(-1) / n
    c1, c2 = np.repeat(c1, cpg, axis=1)[:, :, None], np.repeat(c2, cpg, axis=1)[:, :, None]
    dx = (wdy - (xhat * c1 + c2)) * rstd
    return {"DX_ptr": dx, "DW_ptr": i["DW_ptr"] + (up * xhat).sum((0, 2)), "DB_ptr": i["DB_ptr"] + up.sum((0, 2))}


def sparsemax_forward(i, c):  # the threshold from the sorted row given (the caller sorts x descending)
    z, x = i["sorted_x_ptr"], i["x_ptr"]
    r = np.arange(1, z.shape[1] + 1)
    support = z > (np.cumsum(z, 1) - 1) / r
    k = np.maximum(support.sum(1), 1)
    tau = ((z * support).sum(1) - 1) / k
    return {"o_ptr": np.maximum(x - tau[:, None], 0)}


def sparsemax_backward(i, c):  # on the support (o > 0): go minus its mean over the support; 0 elsewhere
    o, go = i["o_ptr"], i["go_ptr"]
    supp = o > 0
    mean = (go * supp).sum(1) / np.maximum(supp.sum(1), 1e-6)
    return {"gi_ptr": np.where(supp, go - mean[:, None], 0.0)}


def grpo_loss_forward(i, c):  # tokens whose COMPLETION_MASK is 0 are skipped: their outputs keep what they held
    t, L = c["TEMPERATURE"], c["L"]
    logits = i["LOGITS"][:, :L, :] / t
    mx = logits.max(2)
    lse = np.log(np.exp(logits - mx[:, :, None]).sum(2)) + mx
    logp = np.take_along_axis(logits, i["INPUT_IDS"][:, :, None], 2)[:, :, 0] - lse
    coef1 = np.exp(logp - i["OLD_LOGP"])
    coef2 = np.clip(coef1, 1 - c["EPS_LOW"], 1 + c["EPS_HIGH"])
    adv = i["ADVANTAGES"][:, None]
    l1, l2 = coef1 * adv, coef2 * adv
    d = i["REF_LOGP"] - logp
    kl = np.exp(d) - d - 1
    loss = -np.minimum(l1, l2) + c["BETA"] * kl
    keep = i["COMPLETION_MASK"] != 0
    return {"LOSS": np.where(keep, loss, i["LOSS"]), "LSE": np.where(keep, lse, i["LSE"]), "KL": np.where(keep, kl, i["KL"]),
            "IS_CLIPPED": np.where(keep, (l1 < l2).astype(np.float64), i["IS_CLIPPED"])}


def grpo_loss_backward(i, c):  # d loss / d logits with the LSE given; masked tokens get zeros; row L untouched
    t, L = c["TEMPERATURE"], c["L"]
    logits = i["LOGITS"][:, :L, :] / t
    lse = i["LSE"]
    ids = i["INPUT_IDS"]
    logp = np.take_along_axis(logits, ids[:, :, None], 2)[:, :, 0] - lse
    coef1 = np.exp(logp - i["OLD_LOGP"])
    coef2 = np.clip(coef1, 1 - c["EPS_LOW"], 1 + c["EPS_HIGH"])
    adv = i["ADVANTAGES"][:, None]
    l1, l2 = coef1 * adv, coef2 * adv
    dlogp = -l1 * (l2 >= l1) + c["BETA"] * (1 - np.exp(i["REF_LOGP"] - logp))
    dlogp = dlogp * i["DLOSS"] / t
    probs = np.exp(logits - lse[:, :, None])
    onehot = np.arange(logits.shape[2])[None, None, :] == ids[:, :, None]
    d = np.where(onehot, 1 - probs, -probs) * dlogp[:, :, None]
    d = np.where((i["COMPLETION_MASK"] != 0)[:, :, None], d, 0.0)
    out = i["DLOGITS"].copy()
    out[:, :L, :] = d
    return {"DLOGITS": out}


def fla_chunk_cumsum_vector(i, c):  # per chunk of BT steps along T, a prefix sum of each [H, S] vector, times the scale
    s, bt = i["s"], c["BT"]  # [B, T, H, S]
    o = np.concatenate([np.cumsum(s[:, k:k + bt], 1) for k in range(0, s.shape[1], bt)], 1)
    return {"o": o * c["scale"]}


def fla_layer_norm(i, c):  # G = 1, no residual: y = (x - mean) * rstd * w + b, with mean and rstd stored
    x, w, b = i["x"], i["w"], i["b"]
    mean = x.mean(1)
    rstd = 1 / np.sqrt(((x - mean[:, None]) ** 2).mean(1) + c["eps"])
    return {"y": (x - mean[:, None]) * rstd[:, None] * w + b, "mean": mean, "rstd": rstd}


def fla_cross_entropy_split(i, c):  # SPLIT, smoothing: per block of BLOCK_SIZE classes, its own lse and loss share
    x = i["logits_ptr"] * c["logit_scale"]  # [rows, classes]
    labels, bs, ls, total = i["labels_ptr"], c["BLOCK_SIZE"], c["label_smoothing"], c["total_classes"]
    nb = (x.shape[1] + bs - 1) // bs
    lse, loss = np.zeros((nb, x.shape[0])), np.zeros((nb, x.shape[0]))
    for k in range(nb):
        blk = x[:, k * bs:(k + 1) * bs]
        m = blk.max(1)
        lse[k] = np.log(np.exp(blk - m[:, None]).sum(1)) + m
        inside = (labels >= k * bs) & (labels < min(x.shape[1], (k + 1) * bs))
        picked = x[np.arange(x.shape[0]), labels]
        loss[k] = np.where(inside, -ls * blk.sum(1) / total - (1 - ls) * picked, -ls * blk.sum(1) / total)
    return {"lse_ptr": lse, "loss_ptr": loss}


def fla_causal_conv1d(i, c):  # depthwise causal conv (zeros before t = 0), + bias, swish, + residual
    x, w, b = i["x"], i["weight"], i["bias"]  # x [B, T, D], w [D, W]
    W = c["W"]
    pad = np.concatenate([np.zeros((x.shape[0], W - 1, x.shape[2])), x], 1)
    y = sum(pad[:, j:j + x.shape[1], :] * w[:, j] for j in range(W)) + b
    return {"y": silu(y) + i["residual"]}


def fla_solve_tril(i, c):  # per 16 x 16 diagonal block of A (strictly lower triangular): (I + A)^-1
    a = i["A"]  # [B, T, H, 16]
    out = np.zeros_like(a)
    for b in range(a.shape[0]):
        for h in range(a.shape[2]):
            for t in range(0, a.shape[1], 16):
                out[b, t:t + 16, h, :] = np.linalg.inv(np.eye(16) + a[b, t:t + 16, h, :])
    return {"Ai": out}


def unsloth_cross_entropy_backward(i, c):  # in place: dloss * (softmax with the lse given - onehot) * scale
    x = i["logits_ptr"] * c["LOGIT_SCALE"]
    y = np.exp(x - i["logsumexp_ptr"][:, None])
    labels = i["labels_ptr"]
    y[np.arange(x.shape[0]), labels] -= 1
    return {"logits_ptr": i["dloss_ptr"][:, None] * y * c["LOGIT_SCALE"]}


def fla_grpo_forward(i, c):  # token (b, l) reads logits row l of batch b and the id after it (start_idx 1)
    L, M, start = c["L"], c["M"], c["start_idx"]
    logits = i["logits_ptr"][:, :L, :]  # [B, L + 1, N]: the last row of each batch unread
    mx = logits.max(2)
    lse = (np.log(np.exp(logits - mx[:, :, None]).sum(2)) + mx).reshape(-1)
    ids = i["input_ids_ptr"][:, start:start + L]
    logp = np.take_along_axis(logits, ids[:, :, None], 2)[:, :, 0].reshape(-1) - lse
    d = i["ref_logp_ptr"] - logp
    kl = np.exp(d) - d - 1
    adv = np.repeat(i["advantages_ptr"], L)
    keep = i["completion_mask_ptr"] != 0
    loss = np.concatenate([np.where(keep, kl * c["beta"] - adv, 0.0), np.where(keep, kl, 0.0)])
    assert loss.shape[0] == 2 * M
    return {"loss_ptr": loss, "lse_ptr": np.where(keep, lse, i["lse_ptr"])}


def fla_linear_cross_entropy(i, c):  # loss and (in place) d loss / d logits with the lse given; smoothing, mean
    sc, ls, total = c["logit_scale"], c["label_smoothing"], c["total"]
    x = i["logits"] * sc
    lse, y = i["lse"], i["target"]
    v = x.shape[1]
    rows = np.arange(x.shape[0])
    loss = ((lse - x[rows, y]) * (1 - ls) + (-ls / v * x).sum(1) + ls * lse) / total
    grad = (np.exp(x - lse[:, None]) - ls / v) * sc / total
    grad[rows, y] += (ls - 1) / total * sc
    return {"logits": grad, "loss": loss}


def fla_fused_recurrent(i, c):  # gated linear attention: h_t = exp(g_t) h_{t-1} + k_t v_t^T, o_t = (scale q_t)^T h_t
    q, k, v, g = i["q"], i["k"], i["v"], i["g"]  # q, k, v [B, T, H, K|V]; g [B, T, H]
    B, T, H = g.shape
    h = i["h0"].reshape(B, H, q.shape[3], v.shape[3]).copy()
    o = np.zeros((1,) + v.shape)
    for t in range(T):
        h = h * np.exp(g[:, t, :])[:, :, None, None] + k[:, t, :, :, None] * v[:, t, :, None, :]
        o[0, :, t] = np.einsum("bhk,bhkv->bhv", q[:, t] * c["scale"], h)
    return {"o": o, "ht": h.reshape(B * H, q.shape[3], v.shape[3])}


def wrap_i32(x):
    return (np.asarray(x, dtype=np.int64) + 2**31) % 2**32 - 2**31


def gemlite_pack_over_cols(i, c):  # each run of elements_per_sample values of a row packed into one int32, nibble j at 4j
    w, e, nb = i["W_q_ptr"], c["elements_per_sample"], c["W_nbits"]
    packed = sum(w[:, j::e] << (nb * j) for j in range(e))
    return {"W_q_out_ptr": wrap_i32(packed)}


def gemlite_pack_over_rows(i, c):  # the same down the columns: rows e*r .. e*r + e - 1 into row r
    w, e, nb = i["W_q_ptr"], c["elements_per_sample"], c["W_nbits"]
    packed = sum(w[j::e, :] << (nb * j) for j in range(e))
    return {"W_q_out_ptr": wrap_i32(packed)}


def gemlite_unpack_over_cols(i, c):  # column j of a row is nibble j % e of packed column j // e
    p, e, nb = i["W_q_packed_ptr"], c["elements_per_sample"], c["W_nbits"]
    cols = np.arange(c["num_output_cols"])
    return {"W_q_unpacked_ptr": (p[:, cols // e] >> ((cols % e) * nb)) & ((1 << nb) - 1)}


def gemlite_scale_per_token(i, c):  # int8 quantization per row: scale = max|x| / 127, y = round(x / scale)
    # fp32_scale: the kernel divides in float32, so the reference does too (a quotient near .5 rounds
    # by its float32 value); rounding is half away from zero (libdevice.round).
    x = i["x_ptr"].astype(np.float32)
    scale = np.abs(x).max(1, keepdims=True) / np.float32(c["max_val"])
    a = np.abs(x / scale).astype(np.float64)  # the float32 quotient, exactly
    r = np.floor(a) + (a - np.floor(a) >= 0.5)
    return {"scale_ptr": scale.astype(np.float64), "y_ptr": np.sign(x) * r}


def gemlite_weights(i, c):  # W[k, n] = (nibble k % 8 of packed row k // 8 - zeros[g, n]) * scales[g, n], g = k // group_size, in fp16
    b, e, nb = i["b_ptr"], c["elements_per_sample"], c["W_nbits"]
    k = np.arange(c["K"])
    q = (b[k // e, :] >> ((k % e) * nb)[:, None]) & c["unpack_mask"]
    g = k // c["group_size"]
    return f16(f16(q - i["zeros_ptr"][g, :]) * i["scales_ptr"][g, :])


def gemlite_gemm(i, c):  # C = A @ W (channel_scale_mode 0), one store per tile
    return {"c_ptr": i["a_ptr"] @ gemlite_weights(i, c)}


def gemlite_accumulating(i, c):  # split-K GEMM and the GEMVs: partial products atomically added into C
    return {"c_ptr": i["c_ptr"] + i["a_ptr"] @ gemlite_weights(i, c)}


REFERENCES = {
    "_geglu_tanh_forward_kernel": geglu_tanh_forward,
    "_geglu_tanh_backward_kernel": geglu_tanh_backward,
    "_swiglu_forward_kernel": swiglu_forward,
    "_swiglu_backward_kernel": swiglu_backward,
    "_rms_norm_forward_kernel": rms_norm_forward,
    "_rms_norm_backward_kernel": rms_norm_backward,
    "_triton_rope": liger_rope,
    "_sparsemax_forward_kernel": sparsemax_forward,
    "_sparsemax_backward_kernel": sparsemax_backward,
    "_triton_qwen2vl_mrope": qwen2vl_mrope,
    "_rope_embedding": unsloth_rope,
    "rotary_embedding_kernel": fla_rotary,
    "_layer_norm_forward_kernel": layer_norm_forward,
    "liger_cross_entropy_kernel": cross_entropy,
    "element_mul_kernel": element_mul,
    "_kldiv_kernel_forward": kldiv_forward,
    "embedding_forward_kernel": embedding_forward,
    "sigmoid_fwd_kernel": fla_sigmoid,
    "logsigmoid_fwd_kernel": fla_logsigmoid,
    "softmax_fwd_kernel": fla_softmax_fwd,
    "softmax_bwd_kernel": fla_softmax_bwd,
    "logsumexp_fwd_kernel": fla_logsumexp,
    "l2norm_fwd_kernel1": fla_l2norm,
    "layer_norm_fwd_kernel1": fla_layer_norm_residual,
    "fla/modules/layernorm.py:layer_norm_fwd_kernel": fla_layer_norm,
    "prepare_position_ids_kernel": fla_position_ids,
    "_fg_kernel": unsloth_fg,
    "_exact_forward_kernel": unsloth_exact_gelu,
    "_rms_layernorm_forward": unsloth_rms,
    "_gemma_rms_layernorm_forward": lambda i, c: unsloth_rms(i, c, gemma=True),
    "layernorm_forward": unsloth_layernorm,
    "_kldiv_kernel_backward": kldiv_backward,
    "embedding_backward_kernel": embedding_backward,
    "_approx_forward_kernel": unsloth_approx_gelu,
    "logcumsumexp_fwd_kernel": fla_logcumsumexp,
    "token_shift_fwd_kernel_short": fla_token_shift,
    "_selective_log_softmax_kernel": selective_log_softmax,
    "_grpo_loss_fwd_kernel": grpo_loss_forward,
    "_grpo_loss_bwd_kernel": grpo_loss_backward,
    "grpo_fwd_kernel": fla_grpo_forward,
    "fused_recurrent_fwd_kernel": fla_fused_recurrent,
    "fla/modules/fused_linear_cross_entropy.py:cross_entropy_kernel": fla_linear_cross_entropy,
    "mean_pooling_fwd_kernel": fla_mean_pooling,
    "chunk_local_cumsum_scalar_kernel": fla_chunk_cumsum,
    "chunk_local_cumsum_vector_kernel": fla_chunk_cumsum_vector,
    "l2norm_fwd_kernel": fla_l2norm,
    "swiglu_fwdbwd_kernel": fla_swiglu_fwdbwd,
    "_group_norm_forward_kernel": group_norm_forward,
    "_group_norm_backward_kernel": group_norm_backward,
    "_DWf_DW_dfg_kernel": unsloth_swiglu_backward,
    "_exact_backward_kernel": unsloth_exact_gelu_backward,
    "_tv_distance_kernel": tv_distance,
    "_layer_norm_backward_kernel": layer_norm_backward,
    "_rms_layernorm_backward": unsloth_rms_backward,
    "layernorm_backward": unsloth_layernorm_backward,
    "l2norm_bwd_kernel": fla_l2norm_backward,
    "_jsd_kernel": jsd,
    "cross_entropy_fwd_kernel": fla_cross_entropy_split,
    "kl_div_kernel": fla_kl_div,
    "_cross_entropy_forward": unsloth_cross_entropy_forward,
    "_cross_entropy_backward": unsloth_cross_entropy_backward,
    "_dyt_fwd_kernel": dyt_forward,
    "causal_conv1d_fwd_kernel": fla_causal_conv1d,
    "pack_weights_over_cols_kernel": gemlite_pack_over_cols,
    "pack_weights_over_rows_kernel": gemlite_pack_over_rows,
    "unpack_over_cols_kernel": gemlite_unpack_over_cols,
    "scale_activations_per_token_kernel": gemlite_scale_per_token,
    "gemm_A16fWnO16f_int32packing_kernel": gemlite_gemm,
    "gemm_splitK_A16fWnO16f_int32packing_kernel": gemlite_accumulating,
    "gemv_A16fWnO16f_int32packing_kernel": gemlite_accumulating,
    "gemv_revsplitK_A16fWnO16f_int32packing_kernel": gemlite_accumulating,
    "solve_tril_16x16_kernel": fla_solve_tril,
    "fla/ops/utils/matmul.py:matmul_kernel": fla_matmul_relu,  # (liger has a matmul_kernel too)
    "liger_kernel/ops/experimental/mm_int8int2.py:matmul_kernel": liger_int8_int2_matmul,
}
