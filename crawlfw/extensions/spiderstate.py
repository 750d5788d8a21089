"""Keeps ``spider.state`` (a dict) across runs of a job, in ``JOBDIR/spider.state`` and
in the job's frontier (committed at every checkpoint, so it survives a crash too)."""

import base64
import os
import pickle

from crawlfw import signals
from crawlfw.exceptions import NotConfigured
from crawlfw.utils.job import job_dir

__all__ = ["SpiderState"]


class SpiderState:
    """Loads ``spider.state`` when the spider opens and saves it when it closes.

    The state committed by the job's frontier (``<JOBDIR>/frontier.sqlite``, taken by
    the spider runner at each checkpoint) wins over the file: after a crash it is the
    state that goes with the requests the frontier still holds.

    Enabled only when ``JOBDIR`` is set. The state is pickled (so it must hold
    picklable values) and written atomically (a temporary file renamed over the
    old one), so an interrupted save never leaves a truncated file.

    Args:
        jobdir (str | None): the job directory.
    """

    def __init__(self, jobdir=None):
        self.jobdir = jobdir

    @classmethod
    def from_crawler(cls, crawler):
        jobdir = job_dir(crawler.settings)
        if not jobdir:
            raise NotConfigured
        obj = cls(jobdir)
        crawler.signals.connect(obj.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(obj.spider_opened, signal=signals.spider_opened)
        return obj

    def spider_closed(self, spider):
        if self.jobdir:
            tmp = self.statefn + '.tmp'
            with open(tmp, 'wb') as f:
                pickle.dump(spider.state, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.statefn)

    def spider_opened(self, spider):
        from crawlfw.core.frontier.frontier import read_job_meta

        committed = read_job_meta(self.jobdir).get("spider_state") if self.jobdir else None
        if committed is not None:  # as of the frontier's last commit: the newest
            spider.state = pickle.loads(base64.b64decode(committed))
        elif self.jobdir and os.path.exists(self.statefn):
            with open(self.statefn, 'rb') as f:
                spider.state = pickle.load(f)
        else:
            spider.state = {}

    @property
    def statefn(self):
        """Path of the state file: ``<jobdir>/spider.state``."""
        return os.path.join(self.jobdir, 'spider.state')
