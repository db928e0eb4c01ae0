// A db_bench-style harness for LMDB (Debian liblmdb-dev, Homebrew lmdb), kvbench's system: a
// copy-on-write B-tree in one memory-mapped file, no write-ahead log, no compression. Each put
// is its own write transaction (a batch is one transaction); writes commit with MDB_NOSYNC
// (like db_bench's unsynced writes: a crash can lose the last commits, never corrupt) except
// fillsync, whose commits are durable. Reads run in read-only transactions (one per workload
// and thread, or per get). compact has no counterpart. Workloads, flags, keys, values, seeds
// and output: bench/harness.h.
//
// Build: g++ -O2 -std=c++17 bench/lmdb_bench.cc -llmdb -lpthread -o lmdb_bench

#include <lmdb.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "harness.h"

namespace {

void Check(int rc, const char* what) {
  if (rc != 0) {
    std::fprintf(stderr, "lmdb %s: %s\n", what, mdb_strerror(rc));
    std::exit(1);
  }
}

struct Lmdb : harness::Store {
  const harness::Flags& f;
  MDB_env* env = nullptr;
  MDB_dbi dbi = 0;
  explicit Lmdb(const harness::Flags& flags) : f(flags) {}

  void Open(bool fresh, bool) override {
    if (fresh) std::filesystem::remove_all(f.db);
    std::filesystem::create_directories(f.db);
    Check(mdb_env_create(&env), "env_create");
    // Room for the largest run (fill100K: num/1000 values of 100 KB) with B-tree overhead.
    size_t want = static_cast<size_t>(f.num) * (f.value_size + 64) * 3 + (size_t(1) << 30);
    Check(mdb_env_set_mapsize(env, want), "set_mapsize");
    Check(mdb_env_set_maxreaders(env, 256), "set_maxreaders");
    Check(mdb_env_open(env, f.db.c_str(), MDB_NOSYNC | MDB_NOTLS, 0644), "env_open");
    MDB_txn* txn;
    Check(mdb_txn_begin(env, nullptr, 0, &txn), "txn_begin");
    Check(mdb_dbi_open(txn, nullptr, 0, &dbi), "dbi_open");
    Check(mdb_txn_commit(txn), "commit");
  }
  void Close() override {
    mdb_env_sync(env, 1);
    mdb_env_close(env);
    env = nullptr;
  }
  void Commit(MDB_txn* txn, bool sync) {
    Check(mdb_txn_commit(txn), "commit");
    if (sync) Check(mdb_env_sync(env, 1), "sync");
  }
  void Put(const std::string& k, std::string_view v, bool sync) override {
    MDB_txn* txn;
    Check(mdb_txn_begin(env, nullptr, 0, &txn), "txn_begin");
    MDB_val key{k.size(), const_cast<char*>(k.data())}, val{v.size(), const_cast<char*>(v.data())};
    Check(mdb_put(txn, dbi, &key, &val, 0), "put");
    Commit(txn, sync);
  }
  void Write(const harness::Batch& batch, bool sync) override {
    MDB_txn* txn;
    Check(mdb_txn_begin(env, nullptr, 0, &txn), "txn_begin");
    for (auto& [k, v] : batch) {
      MDB_val key{k.size(), const_cast<char*>(k.data())}, val{v.size(), const_cast<char*>(v.data())};
      Check(mdb_put(txn, dbi, &key, &val, 0), "put");
    }
    Commit(txn, sync);
  }
  bool Get(const std::string& k, std::string* v) override {
    MDB_txn* txn;
    Check(mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn), "txn_begin");
    MDB_val key{k.size(), const_cast<char*>(k.data())}, val;
    int rc = mdb_get(txn, dbi, &key, &val);
    if (rc == 0) v->assign(static_cast<const char*>(val.mv_data), val.mv_size);
    mdb_txn_abort(txn);
    if (rc != 0 && rc != MDB_NOTFOUND) Check(rc, "get");
    return rc == 0;
  }
  void Delete(const std::string& k) override {
    MDB_txn* txn;
    Check(mdb_txn_begin(env, nullptr, 0, &txn), "txn_begin");
    MDB_val key{k.size(), const_cast<char*>(k.data())};
    int rc = mdb_del(txn, dbi, &key, nullptr);
    if (rc != 0 && rc != MDB_NOTFOUND) Check(rc, "del");
    Commit(txn, false);
  }
  long Scan(bool forward, long limit, long* bytes) override {
    MDB_txn* txn;
    MDB_cursor* cur;
    Check(mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn), "txn_begin");
    Check(mdb_cursor_open(txn, dbi, &cur), "cursor_open");
    MDB_val k, v;
    long n = 0;
    for (int rc = mdb_cursor_get(cur, &k, &v, forward ? MDB_FIRST : MDB_LAST); rc == 0 && n < limit;
         rc = mdb_cursor_get(cur, &k, &v, forward ? MDB_NEXT : MDB_PREV)) {
      *bytes += k.mv_size + v.mv_size;
      n++;
    }
    mdb_cursor_close(cur);
    mdb_txn_abort(txn);
    return n;
  }
  bool SeekFinds(const std::string& want) override {
    MDB_txn* txn;
    MDB_cursor* cur;
    Check(mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn), "txn_begin");
    Check(mdb_cursor_open(txn, dbi, &cur), "cursor_open");
    MDB_val k{want.size(), const_cast<char*>(want.data())}, v;
    bool found = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE) == 0 && k.mv_size == want.size() &&
                 std::memcmp(k.mv_data, want.data(), want.size()) == 0;
    mdb_cursor_close(cur);
    mdb_txn_abort(txn);
    return found;
  }
  bool Compact() override { return false; }
};

}  // namespace

int main(int argc, char** argv) {
  harness::Flags f;
  f.db = "/tmp/lmdb-dbbench";
  Lmdb db(f);
  return harness::Main(argc, argv, db, f);
}
