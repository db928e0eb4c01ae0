// A db_bench-style harness for Kyoto Cabinet's TreeDB (Debian libkyotocabinet-dev, Homebrew
// kyoto-cabinet), the third system of LevelDB's own benchmark page (2011). Configured as
// LevelDB's benchmarks/db_bench_tree_db.cc does: options TSMALL and TLINEAR, a 4 MB page cache
// (--cache_size overrides), compression (TCOMPRESS: Kyoto's zlib raw deflate; there is no
// Snappy) unless --compression=none; a synced write (fillsync) is the set followed by
// synchronize(true), Kyoto's fsync of the file. Like that model, a batch is
// its puts one after another (TreeDB has no write-ahead log; its transactions would add one).
// Workloads, flags, keys, values, seeds and output: bench/harness.h.
//
// Build: g++ -O2 -std=c++17 bench/kyoto_bench.cc -lkyotocabinet -lz -lpthread -o kyoto_bench

#include <kchashdb.h>  // TreeDB = PlantDB<HashDB, TYPETREE>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "harness.h"

namespace {

using kyotocabinet::TreeDB;

struct Kyoto : harness::Store {
  const harness::Flags& f;
  std::unique_ptr<TreeDB> owned;
  TreeDB* dbp = nullptr;
  explicit Kyoto(const harness::Flags& flags) : f(flags) {}

  void Fail(const char* what) {
    std::fprintf(stderr, "kyoto %s: %s\n", what, dbp->error().name());
    std::exit(1);
  }
  void Open(bool fresh, bool) override {
    // A new object per open: a TreeDB reopened after close() refuses to open again.
    owned = std::make_unique<TreeDB>();
    dbp = owned.get();
    TreeDB& db = *dbp;
    int opts = TreeDB::TSMALL | TreeDB::TLINEAR;
    if (f.compression != "none") opts |= TreeDB::TCOMPRESS;
    db.tune_options(opts);
    db.tune_page_cache(f.cache_size >= 0 ? f.cache_size : 4 << 20);
    uint32_t mode = TreeDB::OWRITER | TreeDB::OCREATE;
    if (fresh) mode |= TreeDB::OTRUNCATE;
    if (!db.open(f.db + ".kct", mode)) Fail("open");
  }
  void Close() override {
    if (!dbp->close()) Fail("close");
  }
  TreeDB& D() { return *dbp; }
  void Put(const std::string& k, std::string_view v, bool sync) override {
    TreeDB& db = D();
    if (!db.set(k.data(), k.size(), v.data(), v.size())) Fail("set");
    if (sync && !db.synchronize(true)) Fail("synchronize");
  }
  void Write(const harness::Batch& batch, bool sync) override {
    for (auto& [k, v] : batch) Put(k, v, sync);
  }
  bool Get(const std::string& k, std::string* v) override { return D().get(k, v); }
  void Delete(const std::string& k) override { D().remove(k); }
  long Scan(bool forward, long limit, long* bytes) override {
    TreeDB::Cursor* cur = D().cursor();
    long n = 0;
    std::string k, v;
    if (forward ? cur->jump() : cur->jump_back()) {
      while (n < limit && cur->get(&k, &v, false)) {
        *bytes += k.size() + v.size();
        n++;
        if (!(forward ? cur->step() : cur->step_back())) break;
      }
    }
    delete cur;
    return n;
  }
  bool SeekFinds(const std::string& k) override {
    TreeDB::Cursor* cur = D().cursor();
    std::string got;
    bool found = cur->jump(k) && cur->get_key(&got, false) && got == k;
    delete cur;
    return found;
  }
  bool Compact() override { return D().defrag(0); }
};

}  // namespace

int main(int argc, char** argv) {
  harness::Flags f;
  f.db = "/tmp/kyoto-dbbench";
  Kyoto db(f);
  return harness::Main(argc, argv, db, f);
}
