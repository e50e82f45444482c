package verify

// The logistic model over the features of score.go. Fit by TestFitWiCE
// (fit_test.go) on the WiCE development set only (349 claims; supported
// = 1, partially or not supported = 0): class-balanced L2 logistic
// regression (lambda 1) on standardised features, weights converted back
// to raw features. Features chosen by 10-fold cross-validation on dev:
// best window coverage, greedy 3-passage coverage, numbers missing from
// the evidence, names missing from the evidence (out-of-fold balanced
// accuracy 0.765 at probability 0.5, with the cap of probability() for
// claims that state a number the evidence lacks). Features with weight 0
// are computed for the fitting procedure only; negation and antonym contrasts did not
// help on WiCE (cross-validated) and are used only as the contradiction
// rule of the knowledge base (verify.go).
var modelWeights = [nFeatures]float64{3.1758, 1.7233, 0, 0, -1.7300, -0.7270, 0, 0, 0, 0, 0}

const modelBias = -2.0161
