"""Realistic inputs for the four MLPerf Tiny models, built from data that installs from a registry.

No MLPerf Tiny data set can be fetched (only PyPI / Debian packages install), so each generator
makes inputs of the kind the model was trained on, through the model's own preprocessing, from
real data that ships in packages or from a synthesiser that does:

- ``ic_resnet8`` (1×32×32×3) and ``vww_mobilenet_v1_025`` (1×96×96×3): square crops, at random
  positions and scales (10–100 % of the shorter side) with a random horizontal flip, of the real
  colour photographs bundled in scikit-learn (``load_sample_images``: china.jpg, flower.jpg) and
  in scikit-image's wheel (``skimage.data``: astronaut, chelsea, coffee, rocket — files inside the
  wheel, no download), resized with PIL's bilinear filter (antialiased when shrinking). Value
  range, read off the official int8 models' input quantization (assumed to be what the float
  models were trained on): ic_resnet8's input has scale 1.0, zero point −128, i.e. raw pixel
  values 0..255 (MLPerf's CIFAR-10 training does not normalise); vww's has scale 1/255, zero
  point −128, i.e. pixels / 255 in [0, 1].
- ``kws_dscnn`` (1×49×10×1 MFCC): 1-second 16 kHz utterances synthesised by espeak-ng (the Debian
  package; the Makefile installs it) — the ten keywords (yes, no, up, down, left, right, on, off,
  stop, go), other words (the Speech Commands "unknown" class) and silence — with a random voice,
  speed, pitch and time offset and, with probability 0.8, background noise (white / pink / brown,
  volume up to 0.1, as MLPerf's training mixes `_background_noise_`). The front end is MLPerf Tiny
  KWS's (mlcommons/tiny benchmark/training/keyword_spotting get_dataset.py, TensorFlow ops written
  here in numpy): the waveform divided by its maximum, STFT with a 40 ms (640-sample) periodic
  Hann window, 20 ms (320) stride, FFT length 1024 (the next power of two), magnitude; TF's
  ``linear_to_mel_weight_matrix`` (40 HTK-mel bins, 20–4000 Hz, the DC bin zeroed); log(mel +
  1e-6); ``mfccs_from_log_mel_spectrograms`` (DCT-II ·√(2/40)) keeping 10 coefficients: 49 × 10.
- ``ad_autoencoder`` (1×640): synthetic machine sounds (a motor hum: a fundamental of 20–250 Hz
  with decaying harmonics, slow amplitude and frequency modulation, a gear-whine tone, coloured
  broadband noise) at a random level, through the DCASE 2020 task 2 / MLPerf Tiny AD front end
  (mlcommons/tiny anomaly_detection common.py, librosa's defaults written here in numpy):
  power mel spectrogram (n_fft 1024, hop 512, periodic Hann window, 128 Slaney-scale mel bins with
  Slaney area normalisation, 0–8 kHz), 10·log10(mel + float eps), 5 consecutive frames
  concatenated (frame-major: 5 × 128).

``mlperf_inputs(name, n, seed)`` gives N inputs in the float .tflite model's layout (NHWC or
[N, 640]); ``split(name)`` the seeded calibration (100) and evaluation (200) sets used by
bench/quantize_mlperf.py and the acceptance test: generated from different seeds, and checked to
share no input.

Dev-only (bench/quantize_mlperf.py, bench/quantize_shift.py and the quantize tests): not part of
the shipped tilewise package.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import wave
from functools import lru_cache

import numpy as np

from tilewise.errors import TilewiseError

MODELS = ("ad_autoencoder", "ic_resnet8", "kws_dscnn", "vww_mobilenet_v1_025")
CALIB_SEED, EVAL_SEED = 1501, 1502
N_CALIB, N_EVAL = 100, 200

# -- photographs ----------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def photographs() -> tuple[np.ndarray, ...]:
    """The bundled colour photographs (uint8 H×W×3): scikit-learn's two, scikit-image's four."""
    from skimage import data
    from sklearn.datasets import load_sample_images

    pics = [np.asarray(im, dtype=np.uint8) for im in load_sample_images().images]
    pics += [np.asarray(getattr(data, n)(), dtype=np.uint8)[..., :3]
             for n in ("astronaut", "chelsea", "coffee", "rocket")]
    return tuple(pics)


def image_crops(n: int, size: int, seed: int, scale: float) -> np.ndarray:
    """N random square crops resized to size×size, float32 NHWC, pixel values × scale/255."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    pics = photographs()
    out = np.empty((n, size, size, 3), dtype=np.float32)
    for i in range(n):
        im = pics[rng.integers(len(pics))]
        h, w = im.shape[:2]
        side = int(round(min(h, w) * rng.uniform(0.1, 1.0)))
        y0, x0 = rng.integers(0, h - side + 1), rng.integers(0, w - side + 1)
        crop = im[y0:y0 + side, x0:x0 + side]
        if rng.random() < 0.5:
            crop = crop[:, ::-1]
        small = Image.fromarray(np.ascontiguousarray(crop)).resize((size, size), Image.BILINEAR,
                                                                    reducing_gap=2.0)
        out[i] = np.asarray(small, dtype=np.float32) * (scale / 255.0)
    return out


# -- keyword spotting: espeak-ng + MLPerf's MFCC ---------------------------------------------------

KEYWORDS = ("yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go")
OTHER_WORDS = ("bed", "bird", "cat", "dog", "eight", "five", "four", "happy", "house", "marvin",
               "nine", "one", "seven", "sheila", "six", "three", "tree", "two", "wow", "zero",
               "learn", "follow", "forward", "backward", "visual")
VOICES = ("en-us", "en-gb", "en-gb-scotland", "en-gb-x-rp", "en-029", "en-us-nyc", "en-gb-x-gbclan",
          "en-gb-x-gbcwmd")
VARIANTS = ("", "+m1", "+m2", "+m3", "+m4", "+m5", "+m7", "+f1", "+f2", "+f3", "+f4", "+f5",
            "+klatt", "+klatt2", "+klatt4")
SR = 16000
KWS_WINDOW, KWS_STRIDE, KWS_FFT, KWS_MELS, KWS_COEFFS = 640, 320, 1024, 40, 10


def espeak(word: str, voice: str, speed: int, pitch: int) -> np.ndarray:
    """The utterance as float samples in [−1, 1] at 16 kHz (espeak-ng writes 22.05 kHz WAV)."""
    exe = shutil.which("espeak-ng")
    if exe is None:
        raise TilewiseError("espeak-ng is not installed (the KWS inputs synthesise speech with it; "
                            "`make install` installs it with apt-get)")
    wav = subprocess.run([exe, "-v", voice, "-s", str(speed), "-p", str(pitch), "--stdout", word],
                         capture_output=True, check=True).stdout
    with wave.open(io.BytesIO(wav)) as f:
        rate = f.getframerate()
        x = np.frombuffer(f.readframes(f.getnframes()), dtype="<i2").astype(np.float64) / 32768.0
    from scipy.signal import resample_poly

    g = np.gcd(SR, rate)
    return resample_poly(x, SR // g, rate // g)


def _noise(rng: np.random.Generator, n: int) -> np.ndarray:
    """White, pink (1/f) or brown (1/f²) noise of unit peak."""
    kind = rng.integers(3)
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.arange(spec.size, dtype=np.float64)
    f[0] = 1.0
    spec *= f ** (-0.5 * kind)
    x = np.fft.irfft(spec, n)
    return x / np.abs(x).max()


def utterance(rng: np.random.Generator) -> np.ndarray:
    """One second of 16 kHz audio: a keyword (60 %), another word (30 %) or silence (10 %)."""
    u = rng.random()
    clip = np.zeros(SR)
    if u < 0.9:
        words = KEYWORDS if u < 0.6 else OTHER_WORDS
        word = words[rng.integers(len(words))]
        voice = VOICES[rng.integers(len(VOICES))] + VARIANTS[rng.integers(len(VARIANTS))]
        x = espeak(word, voice, int(rng.integers(110, 230)), int(rng.integers(15, 90)))
        nz = np.flatnonzero(np.abs(x) > 1e-3)
        x = x[nz[0]:nz[-1] + 1][:SR] if nz.size else x[:SR]
        at = rng.integers(0, SR - x.size + 1)
        clip[at:at + x.size] = x * rng.uniform(0.3, 1.0)
    if u >= 0.9 or rng.random() < 0.8:
        clip += _noise(rng, SR) * rng.uniform(0.002 if u >= 0.9 else 0.0, 0.1)
    return np.clip(clip, -1.0, 1.0)


@lru_cache(maxsize=1)
def _tf_mel_matrix() -> np.ndarray:
    """TF's linear_to_mel_weight_matrix(40, 513, 16000, 20, 4000): [513, 40], HTK mel, row 0 zero."""
    def mel(f):
        return 1127.0 * np.log1p(np.asarray(f, dtype=np.float64) / 700.0)

    bins = KWS_FFT // 2 + 1
    spec_mel = mel(np.linspace(0.0, SR / 2.0, bins)[1:])[:, None]
    edges = np.linspace(mel(20.0), mel(4000.0), KWS_MELS + 2)
    lo, ce, hi = edges[:-2], edges[1:-1], edges[2:]
    w = np.maximum(0.0, np.minimum((spec_mel - lo) / (ce - lo), (hi - spec_mel) / (hi - ce)))
    return np.vstack([np.zeros((1, KWS_MELS)), w])


def _frames(x: np.ndarray, length: int, step: int) -> np.ndarray:
    count = 1 + (x.size - length) // step
    idx = np.arange(length)[None, :] + step * np.arange(count)[:, None]
    return x[idx]


def _hann(n: int) -> np.ndarray:
    return 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(n) / n)   # periodic (TF / scipy fftbins)


def kws_mfcc(clip: np.ndarray) -> np.ndarray:
    """MLPerf Tiny KWS features of a 1-second clip: [49, 10] (see the module doc)."""
    x = np.asarray(clip, dtype=np.float64)
    x = x / x.max()
    spec = np.abs(np.fft.rfft(_frames(x, KWS_WINDOW, KWS_STRIDE) * _hann(KWS_WINDOW), KWS_FFT))
    log_mel = np.log(spec @ _tf_mel_matrix() + 1e-6)
    k, n = np.arange(KWS_COEFFS)[:, None], np.arange(KWS_MELS)[None, :]
    dct = 2.0 * np.cos(np.pi * k * (2 * n + 1) / (2 * KWS_MELS)) / np.sqrt(2.0 * KWS_MELS)
    return log_mel @ dct.T


def kws_inputs(n: int, seed: int) -> np.ndarray:
    """N MFCC inputs; utterance i draws from its own generator (seed, i), so that the espeak-ng
    processes run concurrently and the result does not depend on their order."""
    from concurrent.futures import ThreadPoolExecutor

    def one(i: int) -> np.ndarray:
        return kws_mfcc(utterance(np.random.default_rng([seed, i])))

    with ThreadPoolExecutor(max_workers=4) as pool:
        feats = list(pool.map(one, range(n)))
    return np.stack(feats)[..., None].astype(np.float32)


# -- anomaly detection: synthetic machine sound + DCASE log-mel ------------------------------------

AD_FFT, AD_HOP, AD_MELS, AD_FRAMES = 1024, 512, 128, 5


@lru_cache(maxsize=1)
def _slaney_mel_matrix() -> np.ndarray:
    """librosa.filters.mel(sr=16000, n_fft=1024, n_mels=128) defaults (Slaney scale and norm): [513, 128]."""
    f_sp, min_log_hz, min_log_mel, logstep = 200.0 / 3, 1000.0, 15.0, np.log(6.4) / 27.0

    def hz_to_mel(f):
        f = np.asarray(f, dtype=np.float64)
        return np.where(f >= min_log_hz, min_log_mel + np.log(np.maximum(f, 1e-10) / min_log_hz) / logstep,
                        f / f_sp)

    def mel_to_hz(m):
        return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), f_sp * m)

    fft_f = np.linspace(0.0, SR / 2.0, AD_FFT // 2 + 1)
    mel_f = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(SR / 2.0), AD_MELS + 2))
    fdiff = np.diff(mel_f)
    ramps = mel_f[:, None] - fft_f[None, :]
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    w = np.maximum(0.0, np.minimum(lower, upper)) * (2.0 / (mel_f[2:] - mel_f[:-2]))[:, None]
    return w.T


def machine_sound(rng: np.random.Generator, samples: int) -> np.ndarray:
    """A toy-car-like motor: harmonic hum with AM/FM, a gear whine and coloured noise."""
    t = np.arange(samples) / SR
    f0 = rng.uniform(20.0, 250.0)
    fm = 1.0 + rng.uniform(0.0, 0.03) * np.sin(2 * np.pi * rng.uniform(0.2, 4.0) * t + rng.uniform(0, 6.3))
    phase = 2 * np.pi * f0 * np.cumsum(fm) / SR
    decay = rng.uniform(0.5, 1.5)
    x = sum(k ** -decay * np.sin(k * phase + rng.uniform(0, 6.3)) for k in range(1, int(min(40, 7000 / f0)) + 1))
    x = x * (1.0 + rng.uniform(0.0, 0.5) * np.sin(2 * np.pi * rng.uniform(1.0, 30.0) * t))
    whine = rng.uniform(0.0, 0.3) * np.sin(2 * np.pi * rng.uniform(800.0, 5000.0) * t * fm)
    x = x / np.abs(x).max() + whine + _noise(rng, samples) * rng.uniform(0.02, 0.5)
    level = 10.0 ** (rng.uniform(-40.0, -8.0) / 20.0)   # −40 .. −8 dBFS peak
    return x / np.abs(x).max() * level


def ad_logmel(clip: np.ndarray) -> np.ndarray:
    """DCASE log-mel frames of a clip (no centre padding: the frames are taken inside): [T, 128]."""
    spec = np.abs(np.fft.rfft(_frames(np.asarray(clip, np.float64), AD_FFT, AD_HOP) * _hann(AD_FFT))) ** 2
    return 10.0 * np.log10(spec @ _slaney_mel_matrix() + np.finfo(np.float64).eps)


def ad_inputs(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    samples = AD_FFT + AD_HOP * (AD_FRAMES - 1)
    return np.stack([ad_logmel(machine_sound(rng, samples)).reshape(-1) for _ in range(n)]).astype(np.float32)


# -- per model -------------------------------------------------------------------------------------


def mlperf_inputs(name: str, n: int, seed: int) -> np.ndarray:
    """N realistic inputs of MLPerf Tiny model `name`, in its float .tflite layout."""
    if name == "ic_resnet8":
        return image_crops(n, 32, seed, 255.0)
    if name == "vww_mobilenet_v1_025":
        return image_crops(n, 96, seed, 1.0)
    if name == "kws_dscnn":
        return kws_inputs(n, seed)
    if name == "ad_autoencoder":
        return ad_inputs(n, seed)
    raise TilewiseError(f"no input generator for model '{name}' (one of {', '.join(MODELS)})")


def split(name: str, n_calib: int = N_CALIB, n_eval: int = N_EVAL) -> tuple[np.ndarray, np.ndarray]:
    """(calibration, evaluation) inputs of `name`: different seeds, no input shared."""
    calib, evals = mlperf_inputs(name, n_calib, CALIB_SEED), mlperf_inputs(name, n_eval, EVAL_SEED)
    seen = {x.tobytes() for x in calib}
    if any(x.tobytes() in seen for x in evals):
        raise AssertionError(f"{name}: the calibration and evaluation inputs share an input")
    return calib, evals
