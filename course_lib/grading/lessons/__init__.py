"""One module per lesson holding that lesson's graded exercises (``exNN_<notebook>.py``); they
are listed in :mod:`course_lib.grading.registry`. ``common`` holds helpers several share."""
