/* analysis_opclass.c - hot_operation advice by what an operation is
 * (formats/rules.md §4.1): every class family, forward and backward, a
 * container, the program's own class, no class, and kinds the class does
 * not decide; the class reaches the report's operations and the finding. */
#include "analysis_util.h"
#include "schema_check.h"

static void teardown(void)
{
    fx_remove_all();
}

TestSuite(analysis_opclass, .fini = teardown);

typedef struct op_case {
    const char *name, *cls;
    prof_kind kind;
    const char *advice; /* a phrase the recommendation must hold */
} op_case;

static const op_case cases[] = {
    { "head.1.forward", "torch.nn.Linear", PROF_KIND_COMPUTE,
      "it is a single library layer (torch.nn.Linear): its time is the matrix multiply itself" },
    { "head.1.backward", "torch.nn.Linear", PROF_KIND_COMPUTE,
      "it is the backward of a single library layer (torch.nn.Linear): its time is the gradient "
      "of the matrix multiply" },
    { "stem.forward", "torch.nn.Conv2d", PROF_KIND_COMPUTE, "channels_last" },
    { "up.backward", "torch.nn.ConvTranspose2d", PROF_KIND_COMPUTE, "gradient of the convolution" },
    { "rnn.forward", "torch.nn.LSTM", PROF_KIND_COMPUTE, "Python loop over time steps" },
    { "attn.forward", "torch.nn.MultiheadAttention", PROF_KIND_COMPUTE,
      "scaled_dot_product_attention" },
    { "emb.forward", "torch.nn.Embedding", PROF_KIND_COMPUTE, "table lookup itself, bound by memory" },
    { "norm.forward", "torch.nn.LayerNorm", PROF_KIND_COMPUTE,
      "an elementwise kernel bound by memory" },
    { "layers.forward", "torch.nn.ModuleList", PROF_KIND_COMPUTE,
      "it is a container (torch.nn.ModuleList): its own time is the code between its children, "
      "not in them: record deeper (prof record --python-hooks modules=2" },
    { "enc.forward", "torch.nn.TransformerEncoderLayer", PROF_KIND_COMPUTE, "it is a container" },
    { "optimizer.step", "torch.optim.AdamW", PROF_KIND_COMPUTE, "fused=True" },
    { "data_loading", "torch.utils.data.DataLoader", PROF_KIND_DATA, "persistent_workers=True" },
    { "block.forward", "model.Block", PROF_KIND_COMPUTE,
      "it is model.Block, the program's own code: profile inside it with nested regions" },
    { "mystery", NULL, PROF_KIND_COMPUTE, "spends" /* checked below: the kind's text */ },
    { "loss.item", "torch.nn.Linear", PROF_KIND_SYNC, "remove the host-device synchronisation" },
    { "odd.data", "torch.nn.Linear", PROF_KIND_IO, "move the I/O off the training thread" },
};
#define NCASES (sizeof cases / sizeof cases[0])

/* 20 steps of 10 ms per case; every op is an outermost region of its own,
 * except the container, which holds a child region (instrumented deeper). */
static const char *write_ops(void)
{
    const char *path = fx_path("classes.prof");
    synth *s = synth_open(path, NULL);
    synth_thread(s, 0, 1, "train");
    for (size_t k = 0; k < NCASES; k++)
        if (cases[k].cls)
            synth_class(s, cases[k].name, cases[k].cls);
    synth_class(s, "layers.0.forward", "torch.nn.Linear");
    synth_class(s, "gemm", "cublas"); /* a kernel: its kind decides */
    uint64_t t = FX_MS;
    for (uint64_t i = 0; i < 20; i++) {
        uint64_t t0 = t;
        for (size_t k = 0; k < NCASES; k++) {
            if (strcmp(cases[k].name, "layers.forward") == 0)
                synth_region(s, 0, "layers.0.forward", PROF_KIND_COMPUTE, 1, t + FX_MS,
                             2 * FX_MS);
            synth_region(s, 0, cases[k].name, cases[k].kind, 0, t, 10 * FX_MS);
            t += 10 * FX_MS;
        }
        synth_gpu_kernel(s, "gemm", 0, 7, i, t0, 5 * FX_MS);
        synth_step(s, 0, i, PROF_STEP_SAMPLED, t0, t - t0);
    }
    cr_assert_eq(synth_close(s, NULL), 0);
    return path;
}

static cJSON *report_all(void)
{
    analysis_options o;
    analysis_options_default(&o);
    o.hot_threshold_pct = 1.0;
    o.top = 0;
    return au_report(write_ops(), &o);
}

Test(analysis_opclass, advice_follows_what_the_operation_is)
{
    cJSON *r = report_all();
    for (size_t k = 0; k < NCASES; k++) {
        const cJSON *f = au_finding(r, "hot_operation", cases[k].name);
        cr_assert_not_null(f, "%s not flagged", cases[k].name);
        const char *rec = au_str(f, "recommendation");
        cr_assert(strstr(rec, cases[k].advice) != NULL, "%s: '%s' not in: %s", cases[k].name,
                  cases[k].advice, rec);
        const cJSON *cls = cJSON_GetObjectItemCaseSensitive(au_get(f, "evidence"),
                                                            "module_class");
        if (cases[k].cls)
            cr_assert_str_eq(cJSON_GetStringValue(cls), cases[k].cls);
        else
            cr_assert_null(cls);
    }
    const char *plain = au_str(au_finding(r, "hot_operation", "mystery"), "recommendation");
    cr_assert(strstr(plain, "): profile inside it with nested regions") != NULL, "%s", plain);
    const char *kernel = au_str(au_finding(r, "hot_operation", "gemm"), "recommendation");
    cr_assert(strstr(kernel, "this kernel dominates GPU time") != NULL, "%s", kernel);
    cJSON_Delete(r);
}

Test(analysis_opclass, operations_carry_their_class)
{
    cJSON *r = report_all();
    cJSON *schema = schema_load("formats/report.schema.json");
    char why[600];
    cr_assert(schema_check(schema, schema, r, why, sizeof why), "%s", why);
    cJSON_Delete(schema);
    const cJSON *ops = au_get(r, "operations");
    const cJSON *lin = au_named(ops, "name", "head.1.forward");
    cr_assert_str_eq(au_str(lin, "module_class"), "torch.nn.Linear");
    cr_assert_str_eq(au_str(au_named(ops, "name", "gemm"), "module_class"), "cublas");
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(au_named(ops, "name", "mystery"),
                                                    "module_class"));
    cJSON_Delete(r);
}
