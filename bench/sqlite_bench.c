/* A db_bench-style harness for SQLite (Debian libsqlite3-dev), a peer baseline for Strata's
 * benchmarks, modelled on what LevelDB's own doc/bench/db_bench_sqlite3.cc measures: one
 * connection, PRAGMA locking_mode=EXCLUSIVE, PRAGMA journal_mode=WAL (default autocheckpoint),
 * a key/value table, prepared statements, REPLACE INTO for writes, each write its own
 * (autocommit) transaction with synchronous=OFF, synchronous=FULL for fillsync, and a full WAL
 * checkpoint at the end of each write workload, inside the timing as db_bench_sqlite3 does.
 * The same workload names, flags, key format (%016d), value generator (compressible 100-byte
 * pieces, ratio 0.5), random seeds (Park-Miller, 301 for values and 1000 for keys) and JSON
 * lines as `strata bench` and bench/leveldb_bench.cc, so the table lines up in one run
 * (bench/db_bench.sh).
 *
 * Choices: the table is `test(key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID` (one clustered
 * B-tree, the natural key/value layout; --without_rowid=0 gives db_bench_sqlite3's rowid table
 * plus key index); SQLite's default 4 KB pages; a page cache of LevelDB's default block cache,
 * 8 MB, or --cache_size bytes. fillbatch, bulkload_seq and bulkload_random write 1000 rows per
 * transaction (synchronous=OFF; SQLite has no switch to skip its WAL). Reads: SELECT ... WHERE
 * key = ?; readseq/readreverse step one SELECT ... ORDER BY key [DESC]; seekrandom is
 * SELECT ... WHERE key >= ? ORDER BY key LIMIT 1. compact has no SQLite counterpart and prints
 * nothing (JSON) or "skipped". --compression is accepted and ignored (SQLite stores values
 * uncompressed). One thread only.
 *
 * Build: gcc -O2 -Wall bench/sqlite_bench.c -lsqlite3 -o sqlite_bench
 */
#define _POSIX_C_SOURCE 200809L
#include <sqlite3.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct { uint32_t seed; } Random; /* LevelDB util/random.h */

static Random random_new(uint32_t s) {
  Random r;
  r.seed = s & 0x7fffffffu;
  if (r.seed == 0 || r.seed == 2147483647L) r.seed = 1;
  return r;
}

static uint32_t random_next(Random* r) {
  const uint32_t M = 2147483647L;
  const uint64_t A = 16807;
  uint64_t product = r->seed * A;
  r->seed = (uint32_t)((product >> 31) + (product & M));
  if (r->seed > M) r->seed -= M;
  return r->seed;
}

static uint32_t random_uniform(Random* r, long n) { return random_next(r) % (uint32_t)n; }

/* The values' bytes are made at the first valuegen_generate (LevelDB's db_bench makes its
   generator in DoWrite): a workload that writes nothing does not time making 1 MiB of them. */
typedef struct {
  char* data;
  size_t size, pos;
  double ratio;
} ValueGen;

static ValueGen valuegen_new(double ratio) {
  ValueGen g = {NULL, 0, 0, ratio};
  return g;
}

static void valuegen_fill(ValueGen* g) {
  Random rnd = random_new(301);
  int raw = (int)(100 * g->ratio);
  if (raw < 1) raw = 1;
  size_t cap = (1u << 20) + 100;
  g->data = malloc(cap);
  g->size = 0;
  g->pos = 0;
  char* piece = malloc(raw);
  while (g->size < (1u << 20)) {
    for (int i = 0; i < raw; i++) piece[i] = (char)(' ' + random_uniform(&rnd, 95));
    for (int i = 0; i < 100; i++) g->data[g->size++] = piece[i % raw];
  }
  free(piece);
}

static const char* valuegen_generate(ValueGen* g, size_t len) {
  if (!g->data) valuegen_fill(g);
  if (g->pos + len > g->size) g->pos = 0;
  g->pos += len;
  return g->data + g->pos - len;
}

typedef struct {
  const char* benchmarks;
  long num, reads, value_size, cache_size, bloom_bits, write_buffer_size, max_file_size, threads;
  double compression_ratio;
  const char* db;
  const char* compression;
  int use_existing_db, json, without_rowid;
} Flags;

typedef struct {
  long done, bytes, found;
  char message[128];
} Stats;

static sqlite3* db;
static char db_file[4096];

static void die(const char* what, int rc) {
  fprintf(stderr, "sqlite %s error %d: %s\n", what, rc, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  exit(1);
}

static void exec(const char* sql) {
  char* err = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
  if (rc != SQLITE_OK) {
    fprintf(stderr, "sqlite error in \"%s\": %s\n", sql, err ? err : sqlite3_errstr(rc));
    exit(1);
  }
}

static sqlite3_stmt* prepare(const char* sql) {
  sqlite3_stmt* s = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
  if (rc != SQLITE_OK) die(sql, rc);
  return s;
}

static void step_done(sqlite3_stmt* s) {
  int rc = sqlite3_step(s);
  if (rc != SQLITE_DONE) die("step", rc);
  sqlite3_reset(s);
}

static void destroy_db(void) {
  static const char* suffix[] = {"", "-wal", "-shm", "-journal"};
  char path[4200];
  for (int i = 0; i < 4; i++) {
    snprintf(path, sizeof(path), "%s%s", db_file, suffix[i]);
    if (unlink(path) != 0 && errno != ENOENT) { perror(path); exit(1); }
  }
}

static void open_db(const Flags* f) {
  int rc = sqlite3_open_v2(db_file, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
  if (rc != SQLITE_OK) die("open", rc);
  char sql[256];
  snprintf(sql, sizeof(sql), "PRAGMA cache_size = -%ld", (f->cache_size >= 0 ? f->cache_size : 8L << 20) / 1024);
  exec(sql);
  exec("PRAGMA locking_mode = EXCLUSIVE");
  exec("PRAGMA journal_mode = WAL");
  snprintf(sql, sizeof(sql), "CREATE TABLE IF NOT EXISTS test (key BLOB PRIMARY KEY, value BLOB)%s",
           f->without_rowid ? " WITHOUT ROWID" : "");
  exec(sql);
}

static void close_db(void) {
  if (db == NULL) return;
  int rc = sqlite3_close(db);
  if (rc != SQLITE_OK) die("close", rc);
  db = NULL;
}

static void key(long k, char* buf, size_t cap) { snprintf(buf, cap, "%016ld", k); }

static void checkpoint(void) {
  int rc = sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_FULL, NULL, NULL);
  if (rc != SQLITE_OK) die("checkpoint", rc);
}

/* Writes n rows, `batch` per transaction (1: autocommit). */
static void write_rows(Stats* st, Random* rnd, ValueGen* gen, long num, int seq, long n, long batch,
                       long vsize, int sync) {
  exec(sync ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = OFF");
  sqlite3_stmt* put = prepare("REPLACE INTO test (key, value) VALUES (?, ?)");
  sqlite3_stmt* begin = prepare("BEGIN");
  sqlite3_stmt* commit = prepare("COMMIT");
  char k[32];
  for (long i = 0; i < n; i += batch) {
    if (batch > 1) step_done(begin);
    for (long j = 0; j < batch; j++) {
      key(seq ? i + j : (long)random_uniform(rnd, num), k, sizeof(k));
      sqlite3_bind_blob(put, 1, k, 16, SQLITE_STATIC);
      sqlite3_bind_blob(put, 2, valuegen_generate(gen, vsize), (int)vsize, SQLITE_STATIC);
      step_done(put);
      st->bytes += vsize + 16;
      st->done++;
    }
    if (batch > 1) step_done(commit);
  }
  sqlite3_finalize(put);
  sqlite3_finalize(begin);
  sqlite3_finalize(commit);
  checkpoint();
}

/* Returns 0 when the workload has no SQLite counterpart (nothing is reported). */
static int run_one(const Flags* f, const char* name, Stats* st) {
  Random rnd = random_new(1000);
  ValueGen gen = valuegen_new(f->compression_ratio);
  long num = f->num, reads = f->reads < 0 ? f->num : f->reads, vs = f->value_size;
  int ok = 1;
  char k[32];
  if (!strcmp(name, "fillseq")) write_rows(st, &rnd, &gen, num, 1, num, 1, vs, 0);
  else if (!strcmp(name, "fillrandom") || !strcmp(name, "overwrite")) write_rows(st, &rnd, &gen, num, 0, num, 1, vs, 0);
  else if (!strcmp(name, "fillbatch")) write_rows(st, &rnd, &gen, num, 1, num, 1000, vs, 0);
  else if (!strcmp(name, "fillsync")) write_rows(st, &rnd, &gen, num, 0, num / 1000, 1, vs, 1);
  else if (!strcmp(name, "fill100K")) write_rows(st, &rnd, &gen, num, 0, num / 1000, 1, 100000, 0);
  else if (!strcmp(name, "bulkload_seq") || !strcmp(name, "bulkload_random"))
    write_rows(st, &rnd, &gen, num, !strcmp(name, "bulkload_seq"), num, 1000, vs, 0);
  else if (!strcmp(name, "readseq") || !strcmp(name, "readreverse")) {
    sqlite3_stmt* s = prepare(!strcmp(name, "readseq") ? "SELECT key, value FROM test ORDER BY key"
                                                       : "SELECT key, value FROM test ORDER BY key DESC");
    int rc;
    while (st->done < reads && (rc = sqlite3_step(s)) == SQLITE_ROW) {
      st->bytes += sqlite3_column_bytes(s, 0) + sqlite3_column_bytes(s, 1);
      st->done++;
    }
    sqlite3_finalize(s);
  } else if (!strcmp(name, "readrandom") || !strcmp(name, "readmissing") || !strcmp(name, "readhot")) {
    long range = !strcmp(name, "readhot") ? (num + 99) / 100 : num;
    int missing = !strcmp(name, "readmissing");
    sqlite3_stmt* s = prepare("SELECT value FROM test WHERE key = ?");
    for (long i = 0; i < reads; i++) {
      key(random_uniform(&rnd, range), k, sizeof(k));
      if (missing) strcat(k, ".");
      sqlite3_bind_blob(s, 1, k, (int)strlen(k), SQLITE_STATIC);
      int rc = sqlite3_step(s);
      if (rc == SQLITE_ROW) {
        sqlite3_column_blob(s, 0);
        st->found++;
      } else if (rc != SQLITE_DONE) die("step", rc);
      sqlite3_reset(s);
      st->done++;
    }
    sqlite3_finalize(s);
    snprintf(st->message, sizeof(st->message), "(%ld of %ld found)", st->found, reads);
  } else if (!strcmp(name, "seekrandom")) {
    sqlite3_stmt* s = prepare("SELECT key, value FROM test WHERE key >= ? ORDER BY key LIMIT 1");
    for (long i = 0; i < reads; i++) {
      key(random_uniform(&rnd, num), k, sizeof(k));
      sqlite3_bind_blob(s, 1, k, 16, SQLITE_STATIC);
      int rc = sqlite3_step(s);
      if (rc == SQLITE_ROW) {
        if (sqlite3_column_bytes(s, 0) == 16 && !memcmp(sqlite3_column_blob(s, 0), k, 16)) st->found++;
      } else if (rc != SQLITE_DONE) die("step", rc);
      sqlite3_reset(s);
      st->done++;
    }
    sqlite3_finalize(s);
    snprintf(st->message, sizeof(st->message), "(%ld of %ld found)", st->found, reads);
  } else if (!strcmp(name, "deleteseq") || !strcmp(name, "deleterandom")) {
    exec("PRAGMA synchronous = OFF");
    int seq = !strcmp(name, "deleteseq");
    sqlite3_stmt* s = prepare("DELETE FROM test WHERE key = ?");
    for (long i = 0; i < num; i++) {
      key(seq ? i : (long)random_uniform(&rnd, num), k, sizeof(k));
      sqlite3_bind_blob(s, 1, k, 16, SQLITE_STATIC);
      step_done(s);
      st->done++;
    }
    sqlite3_finalize(s);
  } else if (!strcmp(name, "mixed")) {
    exec("PRAGMA synchronous = OFF");
    sqlite3_stmt* get = prepare("SELECT value FROM test WHERE key = ?");
    sqlite3_stmt* put = prepare("REPLACE INTO test (key, value) VALUES (?, ?)");
    for (long i = 0; i < num; i++) {
      key(random_uniform(&rnd, num), k, sizeof(k));
      if (i % 2 == 0) {
        sqlite3_bind_blob(get, 1, k, 16, SQLITE_STATIC);
        int rc = sqlite3_step(get);
        if (rc == SQLITE_ROW) {
          sqlite3_column_blob(get, 0);
          st->found++;
        } else if (rc != SQLITE_DONE) die("step", rc);
        sqlite3_reset(get);
      } else {
        sqlite3_bind_blob(put, 1, k, 16, SQLITE_STATIC);
        sqlite3_bind_blob(put, 2, valuegen_generate(&gen, vs), (int)vs, SQLITE_STATIC);
        step_done(put);
        st->bytes += vs + 16;
      }
      st->done++;
    }
    sqlite3_finalize(get);
    sqlite3_finalize(put);
    snprintf(st->message, sizeof(st->message), "(%ld of %ld reads found)", st->found, (num + 1) / 2);
  } else if (!strcmp(name, "compact")) {
    ok = 0;
  } else {
    fprintf(stderr, "unknown benchmark %s\n", name);
    exit(2);
  }
  free(gen.data);
  return ok;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int starts_with(const char* s, const char* p) { return strncmp(s, p, strlen(p)) == 0; }

int main(int argc, char** argv) {
  Flags f = {"fillseq,fillrandom,overwrite,readrandom,readseq", 1000000, -1, 100, -1, -1, 0, 0, 1,
             0.5, "/tmp/sqlite-dbbench", "snappy", 0, 0, 1};
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* eq = strchr(a, '=');
    size_t kl = eq ? (size_t)(eq - a) : strlen(a);
    const char* v = eq ? eq + 1 : "";
#define FLAG(n) (kl == strlen(n) && !strncmp(a, n, kl))
    if (FLAG("--benchmarks")) f.benchmarks = v;
    else if (FLAG("--num")) f.num = atol(v);
    else if (FLAG("--reads")) f.reads = atol(v);
    else if (FLAG("--value_size")) f.value_size = atol(v);
    else if (FLAG("--cache_size")) f.cache_size = atol(v);
    else if (FLAG("--bloom_bits")) f.bloom_bits = atol(v); /* no SQLite counterpart */
    else if (FLAG("--write_buffer_size")) f.write_buffer_size = atol(v); /* likewise */
    else if (FLAG("--max_file_size")) f.max_file_size = atol(v); /* likewise */
    else if (FLAG("--threads")) f.threads = atol(v);
    else if (FLAG("--compression_ratio")) f.compression_ratio = atof(v);
    else if (FLAG("--db")) f.db = v;
    else if (FLAG("--compression")) f.compression = v;
    else if (FLAG("--use_existing_db")) f.use_existing_db = !strcmp(v, "1");
    else if (FLAG("--without_rowid")) f.without_rowid = strcmp(v, "0") != 0;
    else if (FLAG("--json")) f.json = 1;
    else { fprintf(stderr, "unknown flag %s\n", a); return 2; }
#undef FLAG
  }
  if (f.threads != 1) {
    fprintf(stderr, "sqlite_bench runs one thread (one connection, exclusive lock)\n");
    return 2;
  }
  if (f.num <= 0 || f.value_size <= 0 || f.value_size > 100000) {
    fprintf(stderr, "--num must be > 0 and --value_size in 1..100000\n");
    return 2;
  }
  /* --db names a folder, like the other engines; the database is one file in it. */
  if (mkdir(f.db, 0755) != 0 && errno != EEXIST) { perror(f.db); return 1; }
  snprintf(db_file, sizeof(db_file), "%s/sqlite.db", f.db);
  if (!f.use_existing_db) destroy_db();
  char* list = strdup(f.benchmarks);
  for (char* save = NULL, *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    int fresh = starts_with(name, "fill") || starts_with(name, "bulkload");
    if (fresh && f.use_existing_db) continue;
    if (fresh) {
      close_db();
      destroy_db();
    }
    if (db == NULL) open_db(&f);
    Stats st;
    memset(&st, 0, sizeof(st));
    double start = now();
    int ok = run_one(&f, name, &st);
    double secs = now() - start;
    if (!ok) {
      if (!f.json) printf("%-12s : skipped (no SQLite counterpart)\n", name);
      fflush(stdout);
      continue;
    }
    double micros = secs * 1e6 / (st.done > 0 ? st.done : 1);
    double mbps = st.bytes / 1048576.0 / secs;
    if (f.json) {
      char mb[64] = "null";
      if (st.bytes > 0) snprintf(mb, sizeof(mb), "%f", mbps);
      printf("{\"benchmark\":\"%s\",\"micros_per_op\":%.3f,\"ops\":%ld,\"seconds\":%.6f,\"mb_per_s\":%s,\"found\":%ld,\"threads\":%ld}\n",
             name, micros, st.done, secs, mb, st.found, f.threads);
    } else {
      char extra[256] = "";
      if (st.bytes > 0) snprintf(extra, sizeof(extra), "%6.1f MB/s", mbps);
      if (st.message[0]) {
        if (extra[0]) strcat(extra, " ");
        strncat(extra, st.message, sizeof(extra) - strlen(extra) - 1);
      }
      printf("%-12s : %11.3f micros/op;%s%s\n", name, micros, extra[0] ? " " : "", extra);
    }
    fflush(stdout);
  }
  free(list);
  close_db();
  return 0;
}
