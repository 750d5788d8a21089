from crawlfw.settings import Settings
from crawlfw.utils.job import job_dir


def test_job_dir_unset():
    assert job_dir(Settings()) is None


def test_job_dir_created(tmp_path):
    path = tmp_path / "a" / "b"
    assert job_dir(Settings({"JOBDIR": str(path)})) == str(path)
    assert path.is_dir()
    assert job_dir(Settings({"JOBDIR": str(path)})) == str(path)  # exists already
