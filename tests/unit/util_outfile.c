/* util_outfile.c - output files appear whole or not at all. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/outfile.h"

static char dir[64];

static void make_dir(void)
{
    strcpy(dir, "/tmp/prof-outfile-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static int entries(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(util_outfile, commit_renames_into_place, .init = make_dir, .fini = remove_dir)
{
    char path[128], buf[32] = { 0 };
    outfile o;
    prof_error err;
    snprintf(path, sizeof path, "%s/out.txt", dir);
    cr_assert_eq(outfile_open(&o, path, &err), PROF_OK);
    fputs("hello\n", o.fp);
    cr_assert_eq(access(path, F_OK), -1, "the target must not exist before commit");
    cr_assert_eq(outfile_commit(&o, &err), PROF_OK, "%s", err.message);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(buf, sizeof buf, f));
    fclose(f);
    cr_assert_str_eq(buf, "hello\n");
    cr_assert_eq(entries(), 1, "no temporary file is left");
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    mode_t mask = umask(0);
    umask(mask);
    cr_assert_eq(st.st_mode & 0777, 0666 & ~mask, "the umask's mode, not mkstemp's 0600");
}

Test(util_outfile, abort_leaves_nothing_and_keeps_the_old_file, .init = make_dir,
     .fini = remove_dir)
{
    char path[128];
    outfile o;
    prof_error err;
    snprintf(path, sizeof path, "%s/out.txt", dir);
    FILE *f = fopen(path, "w");
    fputs("old", f);
    fclose(f);
    cr_assert_eq(outfile_open(&o, path, &err), PROF_OK);
    fputs("half", o.fp);
    outfile_abort(&o);
    cr_assert_eq(entries(), 1);
    char buf[8] = { 0 };
    f = fopen(path, "r");
    cr_assert_not_null(fgets(buf, sizeof buf, f));
    fclose(f);
    cr_assert_str_eq(buf, "old");
}

Test(util_outfile, unwritable_directory_is_an_io_error)
{
    outfile o;
    prof_error err;
    cr_assert_eq(outfile_open(&o, "/nonexistent-dir/out.txt", &err), PROF_ERR_IO);
    cr_assert(strstr(err.message, "cannot create '/nonexistent-dir/out.txt'"), "%s", err.message);
    cr_assert_null(o.fp);
}

Test(util_outfile, dash_is_standard_output)
{
    outfile o;
    prof_error err;
    cr_assert_eq(outfile_open(&o, "-", &err), PROF_OK);
    cr_assert_eq(o.fp, stdout);
    cr_assert_null(o.tmp);
    cr_assert_eq(outfile_commit(&o, &err), PROF_OK);
}
