// The cluster job lists: the Slurm array covers every point and picks one by
// SLURM_ARRAY_TASK_ID; the GNU parallel file has one command per point; quoting survives paths
// with spaces and quotes. The Slurm script is also run through bash with a fake retarget that
// records its arguments, so the quoting is checked by a real shell, not by string comparison.
#include "tools/sweep/sweep_manifest.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/test_support.h"

namespace {

sweep::ManifestSpec Spec(const std::string& dir) {
  sweep::ManifestSpec spec;
  spec.retarget = "/opt/retarget/bin/retarget";
  spec.model = "/data/my model's.hlo";
  spec.point_args = {"--config",          "tpu-v1", "--set",
                     "array=16x16,32x32", "--set",  "dram_gbps=10,20"};
  spec.points = 4;
  spec.dir = dir;
  return spec;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(SweepManifestTest, ShellQuoting) {
  EXPECT_EQ(sweep::ShellQuote("plain"), "'plain'");
  EXPECT_EQ(sweep::ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(sweep::ShellQuote(""), "''");
}

TEST(SweepManifestTest, ParallelFileHasOneCommandPerPoint) {
  const std::string commands = sweep::ParallelCommands(Spec("/scratch/sw"));
  EXPECT_EQ(Count(commands, "\n"), 4u);
  for (int k = 0; k < 4; ++k) {
    EXPECT_NE(commands.find("--point " + std::to_string(k) + " --csv '/scratch/sw/parts/point-" +
                            std::to_string(k) + ".csv'\n"),
              std::string::npos)
        << commands;
  }
  EXPECT_EQ(commands.substr(0, commands.find('\n')),
            "'/opt/retarget/bin/retarget' sweep '/data/my model'\\''s.hlo' '--config' 'tpu-v1' "
            "'--set' 'array=16x16,32x32' '--set' 'dram_gbps=10,20' -j 1 --force --point 0 --csv "
            "'/scratch/sw/parts/point-0.csv'");
}

TEST(SweepManifestTest, SlurmScriptPicksThePointFromTheArrayTaskId) {
  const std::string script = sweep::SlurmScript(Spec("/scratch/sw"));
  EXPECT_EQ(script.rfind("#!/bin/bash\n", 0), 0u);
  EXPECT_NE(script.find("#SBATCH --array=0-3\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --output=/scratch/sw/logs/point-%a.log\n"), std::string::npos);
  EXPECT_NE(script.find("POINT=\"${SLURM_ARRAY_TASK_ID:?"), std::string::npos);
  EXPECT_NE(script.find("--point \"$POINT\" --csv '/scratch/sw/parts/point-'\"$POINT\".csv"),
            std::string::npos);
  EXPECT_NE(script.find("RETARGET=\"${RETARGET:-/opt/retarget/bin/retarget}\""), std::string::npos);
}

TEST(SweepManifestTest, SlurmScriptRunsUnderBashWithTheTasksPoint) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("sweep manifest test " + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  // A stand-in binary that prints each argument on its own line.
  const std::string fake = (dir / "fake retarget").string();
  std::ofstream(fake) << "#!/bin/bash\nprintf '%s\\n' \"$@\"\n";
  std::filesystem::permissions(fake, std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  std::ofstream(dir / "job.sh") << sweep::SlurmScript(Spec(dir.string()));
  const std::string command = "cd '" + dir.string() + "' && SLURM_ARRAY_TASK_ID=2 RETARGET='" +
                              fake + "' bash job.sh > args.txt";
  ASSERT_EQ(std::system(command.c_str()), 0);
  const std::string args = testing_support::ReadFile((dir / "args.txt").string());
  EXPECT_EQ(args,
            "sweep\n/data/my model's.hlo\n--config\ntpu-v1\n--set\narray=16x16,32x32\n"
            "--set\ndram_gbps=10,20\n-j\n1\n--force\n--point\n2\n--csv\n" +
                dir.string() + "/parts/point-2.csv\n");
  // Without the task id the script refuses to run.
  const std::string bare = "cd '" + dir.string() + "' && env -u SLURM_ARRAY_TASK_ID RETARGET='" +
                           fake + "' bash job.sh >/dev/null 2>&1";
  const int status = std::system(bare.c_str());
  EXPECT_NE(WEXITSTATUS(status), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
