package verify

// The logistic model over the features of score.go. Fit by TestFitWiCE
// (fit_test.go) on the WiCE development set only (349 claims; supported
// = 1, partially or not supported = 0): class-balanced L2 logistic
// regression (lambda 1) on standardised features, weights converted back
// to raw features. Features chosen by 10-fold cross-validation on dev:
// best window coverage, greedy 3-passage coverage, numbers missing from
// the evidence, names missing from the evidence (out-of-fold balanced
// accuracy 0.768 at probability 0.5, with the cap of
// probability() for claims that state a number the evidence lacks). Features with weight 0 are computed
// for the fitting procedure only.
var modelWeights = [nFeatures]float64{3.0465, 1.9607, 0, 0, -1.7283, -0.7255, 0, 0, 0}

const modelBias = -2.0943
