//! Tests per format: see the files below.
