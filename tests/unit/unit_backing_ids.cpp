// BackingIds (src/daemon/backing_ids.h): the backing ids of FUSE passthrough, with the two
// calls to Linux faked so that faults can be injected: a failed reply to an open, transient
// and lasting refusals of a backing file.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <utility>
#include <vector>

#include "backing_ids.h"

namespace ggufs::test {
namespace {

// Linux, faked: FUSE_DEV_IOC_BACKING_OPEN gives ids 1, 2, 3... or the errno queued in `fail`;
// every call is recorded.
struct FakeKernel {
  std::vector<int> fail;  // errnos for the next opens, first first
  int next_id = 1;
  std::vector<int> opened_fds;
  std::vector<std::pair<BackingIds::Request, int>> closed;  // (request, id)

  BackingIds::Kernel kernel() {
    return {[this](BackingIds::Request, int fd) {
              opened_fds.push_back(fd);
              if (!fail.empty()) {
                const int error = fail.front();
                fail.erase(fail.begin());
                return -error;
              }
              return next_id++;
            },
            [this](BackingIds::Request req, int id) { closed.emplace_back(req, id); }};
  }
  std::vector<int> closed_ids() const {
    std::vector<int> ids;
    for (const auto& [req, id] : closed) ids.push_back(id);
    return ids;
  }
};

int request_token;
const BackingIds::Request kReq = &request_token;  // a libfuse request, to BackingIds

constexpr int kFd = 7;  // a model.gguf that is one whole file

TEST(BackingIds, FailedReplyToAFirstOpenClosesItsId) {
  FakeKernel fake;
  BackingIds ids(fake.kernel());
  ids.turn_on();
  const BackingIds::Opened o = ids.open(kReq, 10, kFd);
  ASSERT_EQ(o.id, 1);
  EXPECT_TRUE(o.counted);
  // fuse_reply_open failed (the opener was interrupted): libfuse freed the request, and the
  // kernel will send no release. The id must be closed now, without a request.
  ids.release(nullptr, 10);
  ASSERT_EQ(fake.closed.size(), 1u);
  EXPECT_EQ(fake.closed[0].first, nullptr);
  EXPECT_EQ(fake.closed[0].second, 1);
  // The inode is no longer registered: its next open registers the file again.
  EXPECT_EQ(ids.open(kReq, 10, kFd).id, 2);
  EXPECT_EQ(fake.opened_fds.size(), 2u);
}

TEST(BackingIds, OpensOfAnInodeShareOneIdClosedWithTheLast) {
  FakeKernel fake;
  BackingIds ids(fake.kernel());
  ids.turn_on();
  EXPECT_EQ(ids.open(kReq, 10, kFd).id, 1);
  EXPECT_EQ(ids.open(kReq, 10, kFd).id, 1);
  EXPECT_EQ(ids.open(kReq, 10, kFd).id, 1);
  EXPECT_EQ(ids.open(kReq, 11, kFd).id, 2);  // another inode: its own id
  EXPECT_EQ(fake.opened_fds.size(), 2u);     // one call to Linux for each inode
  ids.release(kReq, 10);
  ids.release(nullptr, 10);  // a failed reply to one of them, not the last open
  EXPECT_TRUE(fake.closed.empty());
  ids.release(kReq, 10);
  EXPECT_EQ(fake.closed_ids(), std::vector<int>{1});
  EXPECT_EQ(fake.closed[0].first, kReq);
  ids.release(kReq, 11);
  EXPECT_EQ(fake.closed_ids(), (std::vector<int>{1, 2}));
  // A release with no open counted (or one too many) closes nothing.
  ids.release(kReq, 10);
  EXPECT_EQ(fake.closed.size(), 2u);
}

TEST(BackingIds, TransientFailuresFallBackForThatOpenOnly) {
  for (const int error : {ENOMEM, EMFILE, ENFILE, EAGAIN, EINTR, ENOSPC}) {
    SCOPED_TRACE(error);
    FakeKernel fake;
    BackingIds ids(fake.kernel());
    ids.turn_on();
    fake.fail = {error};
    const BackingIds::Opened failed = ids.open(kReq, 10, kFd);
    EXPECT_EQ(failed.id, 0);  // served by the daemon
    EXPECT_EQ(failed.error, error);
    EXPECT_FALSE(failed.turned_off);
    EXPECT_TRUE(failed.first_of_its_kind);
    EXPECT_TRUE(failed.counted);
    // Passthrough stays on: another inode gets an id.
    EXPECT_TRUE(ids.on());
    EXPECT_EQ(ids.open(kReq, 11, kFd).id, 1);
    // The same inode, while its open served by the daemon is open, stays with the daemon
    // (Linux would fail a passthrough open of it with EIO), without asking Linux.
    const std::size_t calls = fake.opened_fds.size();
    EXPECT_EQ(ids.open(kReq, 10, kFd).id, 0);
    EXPECT_EQ(fake.opened_fds.size(), calls);
    ids.release(kReq, 10);
    ids.release(kReq, 10);
    EXPECT_TRUE(fake.closed.empty());  // no id to close
    // Its opens released, the same inode gets an id at its next open.
    EXPECT_EQ(ids.open(kReq, 10, kFd).id, 2);
    ids.release(kReq, 10);
    ids.release(kReq, 11);
    EXPECT_EQ(fake.closed_ids(), (std::vector<int>{2, 1}));
  }
}

TEST(BackingIds, TransientFailuresAreReportedOncePerErrno) {
  FakeKernel fake;
  BackingIds ids(fake.kernel());
  ids.turn_on();
  fake.fail = {ENOMEM, EMFILE, ENOMEM};
  EXPECT_TRUE(ids.open(kReq, 10, kFd).first_of_its_kind);
  EXPECT_TRUE(ids.open(kReq, 11, kFd).first_of_its_kind);
  const BackingIds::Opened again = ids.open(kReq, 12, kFd);
  EXPECT_EQ(again.error, ENOMEM);
  EXPECT_FALSE(again.first_of_its_kind);
  EXPECT_EQ(ids.open(kReq, 13, kFd).id, 1);
  EXPECT_TRUE(ids.on());
}

TEST(BackingIds, LastingFailureTurnsItOffButOpenInodesKeepTheirIds) {
  FakeKernel fake;
  BackingIds ids(fake.kernel());
  ids.turn_on();
  EXPECT_EQ(ids.open(kReq, 10, kFd).id, 1);
  fake.fail = {ELOOP};  // a backing file on a stacked file system
  const BackingIds::Opened refused = ids.open(kReq, 11, kFd);
  EXPECT_EQ(refused.id, 0);
  EXPECT_EQ(refused.error, ELOOP);
  EXPECT_TRUE(refused.turned_off);
  EXPECT_FALSE(refused.counted);
  EXPECT_FALSE(ids.on());
  // Later opens of other inodes are not tried in passthrough at all, nor counted.
  const BackingIds::Opened later = ids.open(kReq, 12, kFd);
  EXPECT_EQ(later.id, 0);
  EXPECT_FALSE(later.counted);
  EXPECT_EQ(fake.opened_fds.size(), 2u);
  // The inode already open in passthrough keeps its id, shared by its next opens (Linux would
  // fail them in the other mode), and closes it with its last release.
  EXPECT_EQ(ids.open(kReq, 10, kFd).id, 1);
  ids.release(kReq, 10);
  EXPECT_TRUE(fake.closed.empty());
  ids.release(kReq, 10);
  EXPECT_EQ(fake.closed_ids(), std::vector<int>{1});
  // Then that inode is no exception any more: off.
  EXPECT_EQ(ids.open(kReq, 10, kFd).id, 0);
  EXPECT_EQ(fake.opened_fds.size(), 2u);
}

TEST(BackingIds, OtherLastingErrnosTurnItOffToo) {
  for (const int error : {EPERM, EOPNOTSUPP, EINVAL, EBADF, EIO}) {
    SCOPED_TRACE(error);
    FakeKernel fake;
    BackingIds ids(fake.kernel());
    ids.turn_on();
    fake.fail = {error};
    EXPECT_TRUE(ids.open(kReq, 10, kFd).turned_off);
    EXPECT_FALSE(ids.on());
  }
}

TEST(BackingIds, NothingWithoutADescriptorOrBeforeInit) {
  FakeKernel fake;
  BackingIds ids(fake.kernel());
  EXPECT_FALSE(ids.open(kReq, 10, kFd).counted);  // off until INIT turns it on
  ids.turn_on();
  const BackingIds::Opened o = ids.open(kReq, 10, -1);  // not a whole file
  EXPECT_EQ(o.id, 0);
  EXPECT_FALSE(o.counted);
  EXPECT_TRUE(fake.opened_fds.empty());
}

}  // namespace
}  // namespace ggufs::test
