/* opclass.c - what an operation is, from the class its profile gives its
 * name (format §6.5: prof.torch records torch.nn.Linear for a Linear
 * module's regions), and the fix that fits it (formats/rules.md §4.1).
 * A region that times one library layer spends its time in that layer's
 * kernels, so the fix is the layer's levers, not "look inside it". */
#include <string.h>

#include "analysis/analysis.h"

#define NN "torch.nn."

/* Library layers that do one kind of work, by their torch.nn name. */
typedef struct layer_family {
    const char *const *names;  /* exact names, NULL-terminated            */
    const char *prefix;        /* or names starting with this; NULL: none */
    const char *fwd, *bwd;     /* what its time is, forward and backward  */
    const char *levers;
} layer_family;

static const char *const matmul_names[] = { "Linear", "Bilinear", "LazyLinear", NULL };
static const char *const rnn_names[] = { "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell",
                                         NULL };
static const char *const attention_names[] = { "MultiheadAttention", NULL };
static const char *const embedding_names[] = { "Embedding", "EmbeddingBag", NULL };
static const char *const none[] = { NULL };

static const layer_family families[] = {
    { matmul_names, NULL, "the matrix multiply itself", "the gradient of the matrix multiply",
      "raise the batch size, use mixed precision (bf16/fp16 autocast) or TF32, and let "
      "torch.compile fuse it with its neighbours" },
    { none, "Conv", "the convolution itself", "the gradient of the convolution",
      "mixed precision (autocast), channels_last memory format, "
      "torch.backends.cudnn.benchmark for fixed input shapes, torch.compile" },
    { none, "LazyConv", "the convolution itself", "the gradient of the convolution",
      "mixed precision (autocast), channels_last memory format, "
      "torch.backends.cudnn.benchmark for fixed input shapes, torch.compile" },
    { rnn_names, NULL, "the recurrent kernel itself", "the gradient of the recurrent kernel",
      "run whole sequences through the fused cuDNN layer rather than a Python loop over time "
      "steps, pack padded sequences, use mixed precision, bucket sequences by length" },
    { attention_names, NULL, "the attention itself", "the gradient of the attention",
      "use the fused kernels (need_weights=False, or F.scaled_dot_product_attention), mixed "
      "precision, and bucket sequences by length" },
    { embedding_names, NULL, "the table lookup itself, bound by memory",
      "the gradient of the table lookup, bound by memory",
      "sparse gradients (sparse=True with a sparse optimizer), a smaller table or mixed "
      "precision" },
};

/* Normalisation, activations, dropout, pooling, losses: every other leaf. */
static const layer_family elementwise = {
    none, NULL, "an elementwise kernel bound by memory",
    "the gradient of an elementwise kernel bound by memory",
    "fuse it with its neighbours (torch.compile) and use mixed precision; if its calls are "
    "many and short, batch them"
};

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int in_list(const char *s, const char *const *names)
{
    for (; *names; names++)
        if (strcmp(s, *names) == 0)
            return 1;
    return 0;
}

/* A region whose name says it is a backward pass (prof.torch's naming). */
static int is_backward(const char *name)
{
    size_t n = strlen(name);
    return strcmp(name, "backward") == 0 ||
           (n > 9 && strcmp(name + n - 9, ".backward") == 0);
}

/* Modules made of modules: their own time is the code between their
 * children. An instrumented child shows as time outside the op's self
 * time; a Transformer layer is one whatever the instrumentation depth. */
static int is_container(const model_op *op, const char *layer)
{
    static const char *const names[] = { "Sequential", "ModuleList", "ModuleDict", NULL };
    return in_list(layer, names) || starts_with(layer, "Transformer") ||
           op->incl_ns > op->self_ns;
}

static const layer_family *family_of(const char *layer)
{
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        const layer_family *f = &families[i];
        if (in_list(layer, f->names) || (f->prefix && starts_with(layer, f->prefix)))
            return f;
    }
    return &elementwise;
}

static const char *layer_fix(const model_op *op, const char *layer, char *buf, size_t size)
{
    if (is_container(op, layer))
        return fmt_text(buf, size, "it is a container (%s): its own time is the code between "
                        "its children, not in them: record deeper (prof record --python-hooks "
                        "modules=2, or prof.torch.instrument(model, depth=2) in code) or read "
                        "its children's rows", op->cls);
    const layer_family *f = family_of(layer);
    int bwd = is_backward(op->name);
    return fmt_text(buf, size, "it is %sa single library layer (%s): its time is %s, not "
                    "Python: %s", bwd ? "the backward of " : "", op->cls, bwd ? f->bwd : f->fwd,
                    f->levers);
}

const char *opclass_fix(const model_op *op, char *buf, size_t size)
{
    const char *cls = op->cls;
    if (!cls || !*cls || (op->kind != PROF_KIND_COMPUTE && op->kind != PROF_KIND_DATA))
        return NULL;
    if (starts_with(cls, NN) && cls[strlen(NN)])
        return layer_fix(op, cls + strlen(NN), buf, size);
    if (starts_with(cls, "torch.optim."))
        return fmt_text(buf, size, "it is the optimizer's update (%s), a few small kernels per "
                        "parameter tensor: use the foreach or fused implementation "
                        "(foreach=True, fused=True where it exists), or fewer, larger "
                        "parameter tensors", cls);
    if (strcmp(cls, "torch.utils.data.DataLoader") == 0)
        return fmt_text(buf, size, "it is the DataLoader (%s) handing out batches: more "
                        "workers (num_workers), pin_memory=True, persistent_workers=True and "
                        "a larger prefetch_factor; move decoding and augmentation into the "
                        "workers", cls);
    return NULL;
}
