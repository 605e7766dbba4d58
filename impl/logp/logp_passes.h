/* The LoP closed loop over several passes of one sweep (`ibchar run
 * --repeat R`, or runs appended to one directory), each pass a run_id that
 * measured both the logp kernels and rows the model predicts.
 *
 * On a shared host the machine changes speed between one second and the
 * next (docs/model.md): a pass whose kernels ran fast and whose rows ran
 * slow misses by the change, not by the model.  So each pass is modelled
 * alone, its own fits predicting its own rows, in DIR/passes/<run_id>/
 * (results.csv: the pass's rows, meta.csv, fits.csv, logp-derived.csv,
 * lop-model.csv, lop-extrapolation.csv, lop-fanin.csv, model.txt: its
 * stdout), and DIR/lop-model.csv holds per row the median over the passes
 * of the measurement, of each model's prediction and of each model's
 * error (a pass's error: its prediction over its own measurement).  A
 * model predicts a row when it does in more than half of the passes that
 * measured it; else the cell is empty and the status says why.  The best
 * model is the one with the smallest median |error|; best_err_min and
 * best_err_max are its error's range over the passes, passes their count.
 * lop-extrapolation.csv holds each model's median over the passes by the
 * same rule (and passes), lop-fanin.csv is the last pass's; stdout
 * gives RGM's fan-in check (measured at the model's fan-in over the
 * measured best) of every pass, their median and how many are within
 * 1.1x.  Rows of a
 * run without kernels of its own are not modelled (stdout counts them). */
#ifndef IBC_LOGP_PASSES_H
#define IBC_LOGP_PASSES_H

#include "logp/logp_model.h"

/* Models o->dir: by its passes (above) when its results.csv holds two or
 * more and o->fits_dir is NULL, else as one run (ibc_logp_model_run).
 * IBC_ERR_NOTFOUND (logged) when no pass could be modelled. */
int ibc_logp_model_dir(const struct ibc_logp_model_opts *o);

#endif
