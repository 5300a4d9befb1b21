"""Bessel functions of `torch.special` (and Airy's Ai) as kernel arithmetic: eager's Cephes
formulas, built as loop-body Values.

Eager (ATen's Math.h) evaluates each function piecewise: J and Y of orders 0 and 1 by rational
functions of `x*x` (Horner's rule) up to 5 and the Hankel asymptotic form
`(P cos(x - phase) -+ (5/x) Q sin(x - phase)) sqrt(2/pi) / sqrt(x)` past it; I and K (and their
exponentially scaled forms) by Chebyshev series (Cephes' `chbevl`, Clenshaw's sum) on either
side of 8 (I) or 2 (K); Ai by asymptotic forms outside [-2.09, 2.09) and its power series
inside. These lowerings build the same expressions, in the same order and dtype, as Values
(`op`), one per branch, and pick between branches with `where`: no Triton function of their
own, and every Value kind is one the code generator knows. The coefficient tables are Cephes'
(as ATen has them; the asymptotic P and Q are shared by the first and second kinds of one
order).

Only float32 and float64 results (eager's CPU kernels take no other; half `i0` is computed in
float32 and rounded by eager, and runs as an aten call here), and Ai in float32 only.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .ir import LoweringError, Value, constant, op, to_dtype
from .lowering import pointwise, register

aten = torch.ops.aten

J0_PP = [
    7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
    5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00,
    9.99999999999999997821e-01,
]
J0_PQ = [
    9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
    5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00,
    1.00000000000000000218e+00,
]
J0_QP = [
    -1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01,
    -9.32060152123768231369e+01, -1.77681167980488050595e+02, -1.47077505154951170175e+02,
    -5.14105326766599330220e+01, -6.05014350600728481186e+00,
]
J0_QQ = [
    6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
    7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03,
    2.42005740240291393179e+02,
]
J0_RP = [
    -4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14,
    9.70862251047306323952e+15,
]
J0_RQ = [
    4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07,
    1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14,
    3.18121955943204943306e+16, 1.71086294081043136091e+18,
]
J1_PP = [
    7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
    5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00,
    1.00000000000000000254e+00,
]
J1_PQ = [
    5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
    5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00,
    9.99999999999999997461e-01,
]
J1_QP = [
    5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
    3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02,
    2.11688757100572135698e+02, 2.52070205858023719784e+01,
]
J1_QQ = [
    7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
    9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03,
    3.36093607810698293419e+02,
]
J1_RP = [
    -8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13,
    3.68295732863852883286e+15,
]
J1_RQ = [
    6.20836478118054335476e+02, 2.56987256757748830383e+05, 8.35146791431949253037e+07,
    2.21511595479792499675e+10, 4.74914122079991414898e+12, 7.84369607876235854894e+14,
    8.95222336184627338078e+16, 5.32278620332680085395e+18,
]
Y0_YP = [
    1.55924367855235737965e+04, -1.46639295903971606143e+07, 5.43526477051876500413e+09,
    -9.82136065717911466409e+11, 8.75906394395366999549e+13, -3.46628303384729719441e+15,
    4.42733268572569800351e+16, -1.84950800436986690637e+16,
]
Y0_YQ = [
    1.04128353664259848412e+03, 6.26107330137134956842e+05, 2.68919633393814121987e+08,
    8.64002487103935000337e+10, 2.02979612750105546709e+13, 3.17157752842975028269e+15,
    2.50596256172653059228e+17,
]
Y1_YP = [
    1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14,
    -8.12770255501325109621e+15, 2.02439475713594898196e+17, -7.78877196265950026825e+17,
]
Y1_YQ = [
    5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07,
    1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14,
    6.87141087355300489866e+16, 3.97270608116560655612e+18,
]


# exp(-x) I0(x) on [0, 8], Chebyshev in x/2 - 2
I0_A = [
    -4.4153416464793395e-18, 3.3307945188222384e-17, -2.431279846547955e-16,
    1.715391285555133e-15, -1.1685332877993451e-14, 7.676185498604936e-14, -4.856446783111929e-13,
    2.95505266312964e-12, -1.726826291441556e-11, 9.675809035373237e-11, -5.189795601635263e-10,
    2.6598237246823866e-09, -1.300025009986248e-08, 6.046995022541919e-08, -2.670793853940612e-07,
    1.1173875391201037e-06, -4.4167383584587505e-06, 1.6448448070728896e-05,
    -5.754195010082104e-05, 0.00018850288509584165, -0.0005763755745385824, 0.0016394756169413357,
    -0.004324309995050576, 0.010546460394594998, -0.02373741480589947, 0.04930528423967071,
    -0.09490109704804764, 0.17162090152220877, -0.3046826723431984, 0.6767952744094761,
]
# exp(-x) sqrt(x) I0(x) past 8, Chebyshev in 32/x - 2
I0_B = [
    -7.233180487874754e-18, -4.830504485944182e-18, 4.46562142029676e-17, 3.461222867697461e-17,
    -2.8276239805165836e-16, -3.425485619677219e-16, 1.7725601330565263e-15,
    3.8116806693526224e-15, -9.554846698828307e-15, -4.150569347287222e-14, 1.54008621752141e-14,
    3.8527783827421426e-13, 7.180124451383666e-13, -1.7941785315068062e-12,
    -1.3215811840447713e-11, -3.1499165279632416e-11, 1.1889147107846439e-11,
    4.94060238822497e-10, 3.3962320257083865e-09, 2.266668990498178e-08, 2.0489185894690638e-07,
    2.8913705208347567e-06, 6.889758346916825e-05, 0.0033691164782556943, 0.8044904110141088,
]
# exp(-x) I1(x) / x on [0, 8] (in float32, `i1` and `i1e` take the last 17)
I1_A = [
    2.7779141127610464e-18, -2.111421214358166e-17, 1.5536319577362005e-16,
    -1.1055969477353862e-15, 7.600684294735408e-15, -5.042185504727912e-14, 3.223793365945575e-13,
    -1.9839743977649436e-12, 1.1736186298890901e-11, -6.663489723502027e-11,
    3.625590281552117e-10, -1.8872497517228294e-09, 9.381537386495773e-09, -4.445059128796328e-08,
    2.0032947535521353e-07, -8.568720264695455e-07, 3.4702513081376785e-06,
    -1.3273163656039436e-05, 4.781565107550054e-05, -0.00016176081582589674,
    0.0005122859561685758, -0.0015135724506312532, 0.004156422944312888, -0.010564084894626197,
    0.024726449030626516, -0.05294598120809499, 0.1026436586898471, -0.17641651835783406,
    0.25258718644363365,
]
# exp(-x) sqrt(x) I1(x) past 8 (in float32, `i1` and `i1e` take the last 7)
I1_B = [
    7.517296310842105e-18, 4.414348323071708e-18, -4.6503053684893586e-17, -3.209525921993424e-17,
    2.96262899764595e-16, 3.3082023109209285e-16, -1.8803547755107825e-15,
    -3.8144030724370075e-15, 1.0420276984128802e-14, 4.272440016711951e-14,
    -2.1015418427726643e-14, -4.0835511110921974e-13, -7.198551776245908e-13,
    2.0356285441470896e-12, 1.4125807436613782e-11, 3.2526035830154884e-11,
    -1.8974958123505413e-11, -5.589743462196584e-10, -3.835380385964237e-09,
    -2.6314688468895196e-08, -2.512236237870209e-07, -3.882564808877691e-06,
    -0.00011058893876262371, -0.009761097491361469, 0.7785762350182801,
]

# K0(x) + log(x/2) I0(x) on (0, 2], Chebyshev in x*x - 2
K0_A = [
    1.374465435613523e-16, 4.25981614279661e-14, 1.0349695257633842e-11, 1.904516377220209e-09,
    2.5347910790261494e-07, 2.286212103119452e-05, 0.001264615411446926, 0.0359799365153615,
    0.3442898999246285, -0.5353273932339028,
]
# exp(x) sqrt(x) K0(x) past 2, Chebyshev in 8/x - 2
K0_B = [
    5.300433772686263e-18, -1.6475804301524212e-17, 5.2103915050390274e-17,
    -1.678231096805412e-16, 5.512055978524319e-16, -1.848593377343779e-15, 6.3400764774050706e-15,
    -2.2275133269916698e-14, 8.032890775363575e-14, -2.9800969231727303e-13,
    1.140340588208475e-12, -4.514597883373944e-12, 1.8559491149547177e-11, -7.957489244477107e-11,
    3.577397281400301e-10, -1.69753450938906e-09, 8.574034017414225e-09, -4.660489897687948e-08,
    2.766813639445015e-07, -1.8317555227191195e-06, 1.39498137188765e-05, -0.00012849549581627802,
    0.0015698838857300533, -0.0314481013119645, 2.4403030820659555,
]
# x (K1(x) - log(x/2) I1(x)) on (0, 2], Chebyshev in x*x - 2
K1_A = [
    -7.023863479386288e-18, -2.427449850519366e-15, -6.666901694199329e-13,
    -1.4114883926335278e-10, -2.213387630734726e-08, -2.4334061415659684e-06,
    -0.0001730288957513052, -0.006975723859639864, -0.12261118082265715, -0.3531559607765449,
    1.5253002273389478,
]
# exp(x) sqrt(x) K1(x) past 2, Chebyshev in 8/x - 2
K1_B = [
    -5.756744483665017e-18, 1.7940508731475592e-17, -5.689462558442859e-17, 1.838093544366639e-16,
    -6.057047248373319e-16, 2.038703165624334e-15, -7.019837090418314e-15, 2.4771544244813043e-14,
    -8.976705182324994e-14, 3.3484196660784293e-13, -1.2891739609510289e-12, 5.13963967348173e-12,
    -2.1299678384275683e-11, 9.218315187605006e-11, -4.1903547593418965e-10,
    2.015049755197033e-09, -1.0345762465678097e-08, 5.7410841254500495e-08,
    -3.5019606030878126e-07, 2.406484947837217e-06, -1.936197974166083e-05,
    0.00019521551847135162, -0.002857816859622779, 0.10392373657681724, 2.7206261904844427,
]

# Ai past 2.09: numerator, in 1/zeta
AIRY_AN = [
    0.346538101525629, 12.007595273964581, 76.27960536152345, 168.08922493463058,
    159.75639135016442, 70.53609068404442, 14.026469116338967, 1.0,
]
# and denominator
AIRY_AD = [
    0.5675945326387702, 14.75625625848472, 84.51389701414746, 177.31808814540045,
    164.2346928715297, 71.47784008255756, 14.095913560783403, 1.0,
]
# Ai below -2.09: the sine's factor, in z*z
AIRY_AFN = [
    -0.1316963234183318, -0.6264565444319123, -0.6931580360369335, -0.2797799815451191,
    -0.04919001326095003, -0.004062659235948854, -0.0001592764962392621, -2.776491081552329e-06,
    -1.6778769848911465e-08,
]
# and denominator
AIRY_AFD = [
    13.356042070655324, 32.682503279522464, 26.736704094149957, 9.187074029072596,
    1.4752914677166642, 0.11568717379518804, 0.004402916416152112, 7.547203482874142e-05,
    4.5185009297058035e-07,
]
# the cosine's factor
AIRY_AGN = [
    0.01973399320916857, 0.39110302961568827, 1.0657989759959559, 0.9391692298166502,
    0.35146565610554764, 0.06338889196289255, 0.005858041130483885, 0.000282851600836737,
    6.98793669997261e-06, 8.117892395543892e-08, 3.415517847659236e-10,
]
# and denominator
AIRY_AGD = [
    9.30892908077442, 19.835292871831214, 15.564662893286462, 5.476860694229755,
    0.9542936116189619, 0.08645808263523921, 0.004126565238242226, 0.00010125908511650914,
    1.1716673321441352e-06, 4.9183457006293e-09,
]


def _number(value: float, like: Value) -> Value:
    return constant(value, like.dtype)


def _add(a: Value, b: Value) -> Value:
    return op("add", a, b)


def _sub(a: Value, b: Value) -> Value:
    return op("sub", a, b)


def _mul(a: Value, b: Value) -> Value:
    return op("mul", a, b)


def _div(a: Value, b: Value) -> Value:
    return op("truediv", a, b)


def _where(condition: Value, a: Value, b: Value) -> Value:
    return op("where", condition, a, b, dtype=a.dtype)


def _compare(name: str, x: Value, value: float) -> Value:
    return op(name, x, _number(value, x), dtype=torch.bool)


def _horner(z: Value, coefficients: list[float]) -> Value:
    """The polynomial with these coefficients (highest power first) at `z`, as eager's loop
    computes it: from 0, times z plus each coefficient in turn."""
    acc = _number(0.0, z)
    for c in coefficients:
        acc = _add(_mul(acc, z), _number(c, z))
    return acc


def _hankel(x: Value, order: int, second_kind: bool) -> Value:
    """J or Y of order 0 or 1 past x = 5: the asymptotic form."""
    if order == 0:
        z = _div(_number(25.0, x), _mul(x, x))
        tables, phase = (J0_PP, J0_PQ, J0_QP, J0_QQ), 0.785398163397448309615660845819875721
    else:
        five_over_x = _div(_number(5.0, x), x)
        z = _mul(five_over_x, five_over_x)
        tables, phase = (J1_PP, J1_PQ, J1_QP, J1_QQ), 2.356194490192344928846982537459627163
    pp, pq, qp, qq = (_horner(z, table) for table in tables)
    angle = _sub(x, _number(phase, x))
    p = _div(pp, pq)
    q = _mul(_div(_number(5.0, x), x), _div(qp, qq))
    if second_kind:
        s = _add(_mul(p, op("sin", angle)), _mul(q, op("cos", angle)))
    else:
        s = _sub(_mul(p, op("cos", angle)), _mul(q, op("sin", angle)))
    return _div(_mul(s, _number(0.797884560802865355879892119868763737, x)), op("sqrt", x))


def _mirrored(x: Value) -> Value:
    """-x where x < 0 (a -0.0 stays -0.0, as eager's `if (x < 0) x = -x`)."""
    return _where(_compare("lt", x, 0.0), op("neg", x), x)


def bessel_j0(x: Value) -> Value:
    x = _mirrored(x)
    xx = _mul(x, x)
    tiny = _sub(_number(1.0, x), _div(xx, _number(4.0, x)))
    near = _div(_mul(_mul(_sub(xx, _number(5.78318596294678452118e+00, x)),
                          _sub(xx, _number(3.04712623436620863991e+01, x))),
                     _horner(xx, J0_RP)), _horner(xx, J0_RQ))
    near = _where(_compare("lt", x, 0.00001), tiny, near)
    return _where(_compare("le", x, 5.0), near, _hankel(x, 0, second_kind=False))


def bessel_j1(x: Value) -> Value:
    y = _mirrored(x)
    yy = _mul(y, y)
    near = _mul(_mul(_mul(_div(_horner(yy, J1_RP), _horner(yy, J1_RQ)), y),
                     _sub(yy, _number(1.46819706421238932572e+01, y))),
                _sub(yy, _number(4.92184563216946036703e+01, y)))
    out = _where(_compare("le", y, 5.0), near, _hankel(y, 1, second_kind=False))
    return _where(_compare("lt", x, 0.0), op("neg", out), out)


def _y_near_zero(x: Value, near: Value, nonpositive: str) -> Value:
    """Y's value for x <= 5: -inf at 0, NaN below (eager tests `x < 0` for Y0, `x <= 0` for Y1:
    the same points, once 0 is out)."""
    near = _where(_compare(nonpositive, x, 0.0), _number(float("nan"), x), near)
    return _where(_compare("eq", x, 0.0), _number(float("-inf"), x), near)


def bessel_y0(x: Value) -> Value:
    xx = _mul(x, x)
    two_over_pi = _number(0.636619772367581343075535053490057448, x)
    near = _add(_div(_horner(xx, Y0_YP), _horner(xx, Y0_YQ)),
                _mul(_mul(two_over_pi, op("log", x)), bessel_j0(x)))
    return _where(_compare("le", x, 5.0), _y_near_zero(x, near, "lt"),
                  _hankel(x, 0, second_kind=True))


def bessel_y1(x: Value) -> Value:
    xx = _mul(x, x)
    two_over_pi = _number(0.636619772367581343075535053490057448, x)
    near = _add(_mul(x, _div(_horner(xx, Y1_YP), _horner(xx, Y1_YQ))),
                _mul(two_over_pi, _sub(_mul(bessel_j1(x), op("log", x)),
                                       _div(_number(1.0, x), x))))
    return _where(_compare("le", x, 5.0), _y_near_zero(x, near, "le"),
                  _hankel(x, 1, second_kind=True))


def _chebyshev_series(y: Value, coefficients: list[float]) -> Value:
    """The Chebyshev series at `y` as Cephes' `chbevl` sums it (Clenshaw's recurrence)."""
    b0, b1, b2 = _number(coefficients[0], y), _number(0.0, y), _number(0.0, y)
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = _add(_sub(_mul(y, b1), b2), _number(c, y))
    return _mul(_number(0.5, y), _sub(b0, b2))


def _modified(x: Value, near_table: list[float], far_table: list[float],
              near: Callable, far: Callable) -> Value:
    """I0/I1 (scaled or not) from their two series: `near(a, series)` on |x| <= 8 with the
    series in a/2 - 2, `far(a, series)` past it, with the series in 32/a - 2 (a = |x|)."""
    a = op("abs", x)
    inner = _chebyshev_series(_sub(_div(a, _number(2.0, a)), _number(2.0, a)), near_table)
    outer = _chebyshev_series(_sub(_div(_number(32.0, a), a), _number(2.0, a)), far_table)
    return _where(_compare("le", a, 8.0), near(a, inner), far(a, outer))


def _odd(x: Value, out: Value) -> Value:
    return _where(_compare("lt", x, 0.0), op("neg", out), out)


def _i1_tables(x: Value) -> tuple[list[float], list[float]]:
    # (eager's `i1` and `i1e` cut the series short in float32)
    return (I1_A[-17:], I1_B[-7:]) if x.dtype == torch.float32 else (I1_A, I1_B)


def i0(x: Value) -> Value:
    return _modified(x, I0_A, I0_B, lambda a, s: _mul(op("exp", a), s),
                     lambda a, s: _div(_mul(op("exp", a), s), op("sqrt", a)))


def i0e(x: Value) -> Value:
    return _modified(x, I0_A, I0_B, lambda a, s: s, lambda a, s: _div(s, op("sqrt", a)))


def i1(x: Value) -> Value:
    return _odd(x, _modified(x, *_i1_tables(x), lambda a, s: _mul(_mul(op("exp", a), a), s),
                             lambda a, s: _div(_mul(op("exp", a), s), op("sqrt", a))))


def i1e(x: Value) -> Value:
    return _odd(x, _modified(x, *_i1_tables(x), lambda a, s: _mul(s, a),
                             lambda a, s: _div(s, op("sqrt", a))))


def modified_bessel_i1(x: Value) -> Value:
    # (the whole series in every dtype, and its own order of the products)
    return _odd(x, _modified(x, I1_A, I1_B, lambda a, s: _mul(_mul(s, a), op("exp", a)),
                             lambda a, s: _div(_mul(op("exp", a), s), op("sqrt", a))))


def _modified_second_kind(x: Value, order: int, scaled: bool) -> Value:
    """K0 or K1 (times exp(x) where `scaled`): a series in x*x - 2 with I's log term on
    (0, 2], a series in 8/x - 2 past it; infinite at 0, NaN below."""
    near_table, far_table = (K0_A, K0_B) if order == 0 else (K1_A, K1_B)
    near = _chebyshev_series(_sub(_mul(x, x), _number(2.0, x)), near_table)
    far = _chebyshev_series(_sub(_div(_number(8.0, x), x), _number(2.0, x)), far_table)
    if order == 1:
        near = _add(_mul(op("log", _mul(_number(0.5, x), x)), modified_bessel_i1(x)),
                    _div(near, x))
    elif scaled or x.dtype == torch.float64:
        near = _sub(near, _mul(op("log", _mul(_number(0.5, x), x)), i0(x)))
    else:
        # (eager's unscaled K0 halves x by a double 0.5: this term is float64 math, rounded)
        wide = [to_dtype(v, torch.float64) for v in (near, x, i0(x))]
        log_half = op("log", _mul(constant(0.5, torch.float64), wide[1]))
        near = to_dtype(_sub(wide[0], _mul(log_half, wide[2])), x.dtype)
    if scaled:
        near = _mul(near, op("exp", x))
        far = _div(far, op("sqrt", x))
    else:
        far = _div(_mul(op("exp", op("neg", x)), far), op("sqrt", x))
    out = _where(_compare("le", x, 2.0), near, far)
    out = _where(_compare("lt", x, 0.0), _number(float("nan"), x), out)
    return _where(_compare("eq", x, 0.0), _number(float("inf"), x), out)


def spherical_bessel_j0(x: Value) -> Value:
    # sin(x) / x, and its Taylor series to x**12 where |x| < 1/2; each coefficient is eager's
    # `T(1.0) / T(k!)`, a quotient rounded in the dtype
    xx = _mul(x, x)

    def term(sign: float, factorial: float) -> Value:
        one = torch.tensor(sign, dtype=x.dtype)
        return _number((one / torch.tensor(factorial, dtype=x.dtype)).item(), x)

    series = term(1.0, 6227020800.0)
    for sign, factorial in [(-1.0, 39916800.0), (1.0, 362880.0), (-1.0, 5040.0), (1.0, 120.0),
                            (-1.0, 6.0)]:
        series = _add(term(sign, factorial), _mul(xx, series))
    series = _add(_number(1.0, x), _mul(xx, series))
    out = _where(_compare("lt", op("abs", x), 0.5), series, _div(op("sin", x), x))
    return _where(op("isinf", x, dtype=torch.bool), _number(0.0, x), out)


# Steps of Ai's power series that eager's loop (until a term is below float32's epsilon
# relative to the sum) can take on [-2.09, 2.09): 10 in practice, 17 where the sum is exactly
# 0 and the terms run down to 0 (0 / 0 ends it).
AIRY_SERIES_STEPS = 24


def airy_ai(x: Value) -> Value:
    """Ai(x), float32 only: below -2.09 and from 2.09 up, asymptotic forms; between them, the
    Maclaurin series of its two parts, unrolled, each lane keeping its sums once eager's loop
    would have stopped (its term `t` no longer above epsilon)."""
    def num(v: float) -> Value:
        return _number(v, x)

    # below -2.09
    minus_x = op("neg", x)
    zeta_neg = _div(_mul(_mul(num(-2.0), x), op("sqrt", minus_x)), num(3.0))
    z = _div(num(1.0), zeta_neg)
    zz = _mul(z, z)
    afn, afd = _horner(zz, AIRY_AFN), _horner(zz, AIRY_AFD)
    agn, agd = _horner(zz, AIRY_AGN), _horner(zz, AIRY_AGD)
    phase = _add(zeta_neg, num(0.25 * torch.tensor(torch.pi, dtype=x.dtype).item()))
    waves = _sub(_mul(op("sin", phase), _add(num(1.0), _div(_mul(zz, afn), afd))),
                 _mul(op("cos", phase), _div(_mul(z, agn), agd)))
    below = _mul(_div(num(5.64189583547756286948e-01), op("sqrt", op("sqrt", minus_x))), waves)
    # from 2.09
    zeta = _div(_mul(_mul(num(2.0), x), op("sqrt", x)), num(3.0))
    inverse = _div(num(1.0), zeta)
    ratio = _div(_horner(inverse, AIRY_AN), _horner(inverse, AIRY_AD))
    above = _div(_mul(num(5.64189583547756286948e-01), ratio),
                 _mul(_mul(num(2.0), op("sqrt", op("sqrt", x))), op("exp", zeta)))
    # between: f and g, the series of the even and odd parts
    f, g, k, m, n, t = num(1.0), x, num(1.0), num(1.0), x, num(1.0)
    cube = _mul(_mul(x, x), x)
    one = num(1.0)
    for _ in range(AIRY_SERIES_STEPS):
        going = _compare("gt", t, torch.finfo(x.dtype).eps)
        m2 = _mul(m, cube)
        k2 = _add(k, one)
        m2 = _div(m2, k2)
        n2 = _mul(n, cube)
        k2 = _add(k2, one)
        n2 = _div(n2, k2)
        m2 = _div(m2, k2)
        f2 = _add(f, m2)
        k2 = _add(k2, one)
        n2 = _div(n2, k2)
        g2 = _add(g, n2)
        t2 = op("abs", _div(m2, f2))
        f, g, k, m, n, t = (_where(going, new, old) for new, old in
                            [(f2, f), (g2, g), (k2, k), (m2, m), (n2, n), (t2, t)])
    between = _sub(_mul(num(0.355028053887817239260), f), _mul(num(0.258819403792806798405), g))
    out = _where(_compare("lt", x, -2.09), below,
                 _where(_compare("ge", x, 2.09), above, between))
    out = _where(_compare("gt", x, 103.892), num(0.0), out)
    return _where(op("isinf", x, dtype=torch.bool), num(float("nan")), out)


def _lowering(build: Callable[[Value], Value],
              dtypes: tuple[torch.dtype, ...] = (torch.float32, torch.float64)) -> Callable:
    def lowering(lower, node, x):
        dtype = node.meta["val"].dtype
        if dtype not in dtypes:
            raise LoweringError(f"{node.target} in {dtype}")
        return pointwise(lower, [x], build)
    return lowering


for _target, _build in [
    (aten.special_bessel_j0.default, bessel_j0), (aten.special_bessel_j1.default, bessel_j1),
    (aten.special_bessel_y0.default, bessel_y0), (aten.special_bessel_y1.default, bessel_y1),
    (aten.i0.default, i0), (aten.special_modified_bessel_i0.default, i0),
    (aten.special_i0e.default, i0e), (aten.special_i1.default, i1),
    (aten.special_i1e.default, i1e), (aten.special_modified_bessel_i1.default, modified_bessel_i1),
    (aten.special_spherical_bessel_j0.default, spherical_bessel_j0),
    (aten.special_modified_bessel_k0.default, lambda x: _modified_second_kind(x, 0, False)),
    (aten.special_modified_bessel_k1.default, lambda x: _modified_second_kind(x, 1, False)),
    (aten.special_scaled_modified_bessel_k0.default, lambda x: _modified_second_kind(x, 0, True)),
    (aten.special_scaled_modified_bessel_k1.default, lambda x: _modified_second_kind(x, 1, True)),
]:
    register(_target)(_lowering(_build))
# (in float64 the series' bound would be some 70 steps: eager's loop there runs as aten)
register(aten.special_airy_ai.default)(_lowering(airy_ai, (torch.float32,)))
