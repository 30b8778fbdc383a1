/* util_outfile.c - output files appear whole or not at all; an existing
 * target keeps its mode, a read-only one is refused, devices and FIFOs are
 * written through, another user's link in /tmp is not followed, and a
 * temporary name fits however long the target's. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
    while ((e = readdir(d))) /* temporaries are dot files: count them too */
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
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

/* Writes text to path through an outfile; the status of the commit. */
static prof_err write_file(const char *path, const char *text, prof_error *err)
{
    outfile o;
    prof_err e = outfile_open(&o, path, err);
    if (e != PROF_OK)
        return e;
    fputs(text, o.fp);
    return outfile_commit(&o, err);
}

static void read_back(const char *path, char *buf, size_t cap)
{
    memset(buf, 0, cap);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    cr_assert_not_null(fgets(buf, (int)cap, f));
    fclose(f);
}

Test(util_outfile, replacing_keeps_the_mode_never_wider, .init = make_dir, .fini = remove_dir)
{
    char path[128], buf[16];
    prof_error err;
    snprintf(path, sizeof path, "%s/private.txt", dir);
    FILE *f = fopen(path, "w");
    fputs("old", f);
    fclose(f);
    cr_assert_eq(chmod(path, 0600), 0);
    cr_assert_eq(write_file(path, "new", &err), PROF_OK, "%s", err.message);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0600, "mode %o", (unsigned)(st.st_mode & 07777));
    read_back(path, buf, sizeof buf);
    cr_assert_str_eq(buf, "new");
}

Test(util_outfile, read_only_target_is_refused_and_kept, .init = make_dir, .fini = remove_dir)
{
    char path[128], buf[16];
    outfile o;
    prof_error err;
    snprintf(path, sizeof path, "%s/ro.txt", dir);
    FILE *f = fopen(path, "w");
    fputs("old", f);
    fclose(f);
    cr_assert_eq(chmod(path, 0444), 0);
    cr_assert_eq(outfile_open(&o, path, &err), PROF_ERR_IO);
    cr_assert(strstr(err.message, "file is read-only; remove it or choose another name"), "%s",
              err.message);
    cr_assert_null(o.fp);
    read_back(path, buf, sizeof buf);
    cr_assert_str_eq(buf, "old");
    cr_assert_eq(entries(), 1);
}

Test(util_outfile, a_long_name_gets_a_temporary_that_fits, .init = make_dir, .fini = remove_dir)
{
    char path[512], buf[16];
    prof_error err;
    size_t lens[] = { 250, 255 };
    for (size_t i = 0; i < 2; i++) {
        int n = snprintf(path, sizeof path, "%s/", dir);
        memset(path + n, 'a' + (int)i, lens[i]);
        path[(size_t)n + lens[i]] = '\0';
        outfile o;
        cr_assert_eq(outfile_open(&o, path, &err), PROF_OK, "%s", err.message);
        const char *base = strrchr(o.tmp, '/') + 1;
        cr_assert_leq(strlen(base), OUTFILE_NAME_MAX);
        cr_assert_eq(strncmp(base, ".aaaa", 5) == 0 || strncmp(base, ".bbbb", 5) == 0, 1);
        fputs("long", o.fp);
        cr_assert_eq(outfile_commit(&o, &err), PROF_OK, "%s", err.message);
        read_back(path, buf, sizeof buf);
        cr_assert_str_eq(buf, "long");
    }
    cr_assert_eq(entries(), 2, "no temporary file is left");
}

Test(util_outfile, a_message_about_a_long_path_keeps_its_reason)
{
    char path[400] = "/nonexistent-dir/";
    memset(path + strlen(path), 'x', 300);
    outfile o;
    prof_error err;
    cr_assert_eq(outfile_open(&o, path, &err), PROF_ERR_IO);
    cr_assert(strstr(err.message, "cannot create '/nonexistent-dir/xxx"), "%s", err.message);
    cr_assert(strstr(err.message, "...xxx"), "%s", err.message);
    const char *reason = "': No such file or directory";
    size_t n = strlen(err.message);
    cr_assert(n > strlen(reason) && strcmp(err.message + n - strlen(reason), reason) == 0, "%s",
              err.message);
}

Test(util_outfile, a_directory_is_an_error, .init = make_dir, .fini = remove_dir)
{
    outfile o;
    prof_error err;
    cr_assert_eq(outfile_open(&o, dir, &err), PROF_ERR_IO);
    cr_assert(strstr(err.message, "Is a directory"), "%s", err.message);
    cr_assert_eq(entries(), 0);
}

Test(util_outfile, a_link_is_followed_and_kept, .init = make_dir, .fini = remove_dir)
{
    char path[128], link[128], buf[16];
    prof_error err;
    snprintf(path, sizeof path, "%s/real.txt", dir);
    snprintf(link, sizeof link, "%s/link.txt", dir);
    FILE *f = fopen(path, "w");
    fputs("old", f);
    fclose(f);
    cr_assert_eq(symlink("real.txt", link), 0);
    cr_assert_eq(write_file(link, "new", &err), PROF_OK, "%s", err.message);
    struct stat st;
    cr_assert_eq(lstat(link, &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the link is still a link");
    read_back(path, buf, sizeof buf);
    cr_assert_str_eq(buf, "new");
}

/* Another user's link in a sticky world-writable directory would choose
 * which of our files is replaced: refused, and what it points to kept. */
Test(util_outfile, another_users_link_in_a_sticky_directory_is_refused, .init = make_dir,
     .fini = remove_dir)
{
    if (geteuid() != 0)
        cr_skip_test("needs root to give a link to another user");
    char path[128], link[128], mine[128], buf[16];
    prof_error err;
    cr_assert_eq(chmod(dir, 01777), 0);
    snprintf(path, sizeof path, "%s/victim.txt", dir);
    snprintf(link, sizeof link, "%s/report.json", dir);
    snprintf(mine, sizeof mine, "%s/mine.json", dir);
    FILE *f = fopen(path, "w");
    fputs("old", f);
    fclose(f);
    cr_assert_eq(symlink("victim.txt", link), 0);
    cr_assert_eq(lchown(link, 65534, 65534), 0);
    cr_assert_eq(write_file(link, "new", &err), PROF_ERR_IO);
    cr_assert(strstr(err.message, "symbolic link of another user's"), "%s", err.message);
    read_back(path, buf, sizeof buf);
    cr_assert_str_eq(buf, "old");
    cr_assert_eq(entries(), 2, "no temporary left");
    /* the directory's owner's own link is followed, as the kernel's rule has it */
    cr_assert_eq(symlink("victim.txt", mine), 0);
    cr_assert_eq(write_file(mine, "new", &err), PROF_OK, "%s", err.message);
    read_back(path, buf, sizeof buf);
    cr_assert_str_eq(buf, "new");
    /* outside a sticky directory a link is the directory owner's business */
    cr_assert_eq(chmod(dir, 0755), 0);
    cr_assert_eq(write_file(link, "again", &err), PROF_OK, "%s", err.message);
    read_back(path, buf, sizeof buf);
    cr_assert_str_eq(buf, "again");
}

Test(util_outfile, a_fifo_is_written_through, .init = make_dir, .fini = remove_dir)
{
    char path[128], buf[16] = { 0 };
    prof_error err;
    snprintf(path, sizeof path, "%s/fifo", dir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    /* The reader first, so that opening the FIFO to write does not wait. */
    int rd = open(path, O_RDONLY | O_NONBLOCK);
    cr_assert_geq(rd, 0);
    outfile o;
    cr_assert_eq(outfile_open(&o, path, &err), PROF_OK, "%s", err.message);
    cr_assert_null(o.tmp, "no temporary for a FIFO");
    fputs("piped", o.fp);
    cr_assert_eq(outfile_commit(&o, &err), PROF_OK, "%s", err.message);
    cr_assert_eq(read(rd, buf, sizeof buf - 1), 5);
    close(rd);
    cr_assert_str_eq(buf, "piped");
    struct stat st;
    cr_assert_eq(lstat(path, &st), 0);
    cr_assert(S_ISFIFO(st.st_mode), "the FIFO is still a FIFO");
    cr_assert_eq(entries(), 1);
}

Test(util_outfile, a_device_is_written_through)
{
    /* After the FIFO test proved write-through: /dev/null must stay. */
    struct stat st;
    cr_assert_eq(stat("/dev/null", &st), 0);
    if (!S_ISCHR(st.st_mode))
        cr_skip_test("/dev/null is no character device here");
    prof_error err;
    cr_assert_eq(write_file("/dev/null", "nothing", &err), PROF_OK, "%s", err.message);
    cr_assert_eq(stat("/dev/null", &st), 0);
    cr_assert(S_ISCHR(st.st_mode), "/dev/null is still a character device");
}
